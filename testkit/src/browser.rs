//! A real browser for the tests of execgate's web page: Debian's headless Chromium,
//! driven over W3C WebDriver (its `chromedriver` on a free loopback port, `fantoccini`
//! speaking plain HTTP to it). Installed by `.ci/peers chromium` on first use; a test
//! that needs it fails with the reason when it cannot be installed.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;

use crate::peers::chromedriver;

/// How a test finds an element in the page.
pub use fantoccini::Locator;

/// A browser window (1280×800 unless a test resizes it), and the driver behind it; both
/// end when this is dropped.
pub struct Browser {
    pub client: Client,
    _driver: tokio::process::Child,
}

impl Browser {
    /// Starts chromedriver and opens a headless Chromium session.
    pub async fn start() -> Browser {
        let driver_path = chromedriver();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        let driver = tokio::process::Command::new(driver_path)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", driver_path.display()));
        let chromium = driver_path.with_file_name("chromium");
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": chromium,
                // No sandbox: tests run as root, where Chromium's sandbox refuses to start.
                "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                         "--window-size=1280,800", "--no-first-run", "--disable-gpu"],
            }),
        );
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let connected = ClientBuilder::new(HttpConnector::new())
                .capabilities(capabilities.clone())
                .connect(&url)
                .await;
            match connected {
                Ok(client) => {
                    return Browser {
                        client,
                        _driver: driver,
                    };
                }
                // The driver may not listen yet.
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("no WebDriver session from {}: {e}", driver_path.display()),
            }
        }
    }

    /// The element `css` selects; panics naming the selector when there is none.
    pub async fn element(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .find(fantoccini::Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no element {css}: {e}"))
    }

    /// Clicks the element `css` selects, as a person does.
    pub async fn click(&self, css: &str) {
        self.element(css).await.click().await.unwrap();
    }

    /// Types `text` into the field `css` selects.
    pub async fn type_in(&self, css: &str, text: &str) {
        self.element(css).await.send_keys(text).await.unwrap();
    }

    /// Picks the option of value `value` in the list `css` selects.
    pub async fn choose(&self, css: &str, value: &str) {
        self.element(css)
            .await
            .select_by_value(value)
            .await
            .unwrap();
    }

    /// Saves what the window shows as a PNG at `path` (a test's artefact).
    pub async fn screenshot(&self, path: &Path) {
        let png = self.client.screenshot().await.expect("a screenshot");
        std::fs::write(path, png).expect("the screenshot is saved");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The harness itself: a page is loaded, read and drawn. (execgate's page is tested
    /// through this in the daemon's tests.)
    #[tokio::test]
    async fn the_browser_loads_reads_and_draws_a_page() {
        let browser = Browser::start().await;
        let page = "data:text/html,<title>execgate</title><p id=x>&lt;script&gt;</p>";
        browser.client.goto(page).await.unwrap();
        assert_eq!(browser.client.title().await.unwrap(), "execgate");
        let text = browser
            .client
            .find(fantoccini::Locator::Id("x"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(text, "<script>");
        let dir = tempfile::tempdir().unwrap();
        let shot = dir.path().join("page.png");
        browser.screenshot(&shot).await;
        let png = std::fs::read(&shot).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        browser.client.clone().close().await.unwrap();
    }
}
