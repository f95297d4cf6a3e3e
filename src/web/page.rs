//! The page's own files, built into the binary: no CDN, no build step, nothing fetched
//! from elsewhere. `page/index.html` loads `app.css` and `app.js`, which do the rest
//! (docs/web.md#the-page).

use axum::http::header;
use axum::response::IntoResponse;

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const STYLE: &str = include_str!("page/app.css");
const ICON: &str = include_str!("page/favicon.svg");

pub async fn index() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX)
}

pub async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
}

pub async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE)
}

pub async fn icon() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "image/svg+xml")], ICON)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Content-Security-Policy lets no inline script or style run: the page must
    /// have none, nor load anything from elsewhere.
    #[test]
    fn the_page_has_nothing_inline_and_nothing_from_elsewhere() {
        let lower = INDEX.to_ascii_lowercase();
        for forbidden in ["<style", " style=", "javascript:", "http:", "https:", "//"] {
            assert!(
                !lower.contains(forbidden),
                "index.html contains {forbidden:?}"
            );
        }
        // No event handler attributes (`onclick=`, …).
        for (at, _) in lower.match_indices(" on") {
            let name: String = lower[at + 3..]
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect();
            let attribute = lower[at + 3 + name.len()..].starts_with('=');
            assert!(!attribute, "index.html has an on{name}= attribute");
        }
        assert_eq!(lower.matches("<script").count(), 1);
        assert!(lower.contains(r#"<script src="/app.js" defer></script>"#));
        for (name, text) in [("app.js", SCRIPT), ("app.css", STYLE)] {
            for forbidden in ["http://", "https://", "@import", "url("] {
                assert!(!text.contains(forbidden), "{name} contains {forbidden:?}");
            }
        }
        // Agent-supplied text reaches the DOM as text only.
        for forbidden in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "new Function",
        ] {
            assert!(!SCRIPT.contains(forbidden), "app.js uses {forbidden}");
        }
    }
}
