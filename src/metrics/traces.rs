//! One span per request, exported to an OTLP collector over HTTP/protobuf when
//! `traces.otlp_endpoint` is set (docs/metrics.md#traces). A span says who asked (the
//! agent's name), how the request ended and how long it waited: never its command, its
//! working directory, its tool input, its reason, its id or anything else the agent
//! wrote. Spans are batched on the SDK's own thread and sent every `export_delay`;
//! shutdown sends what is left.

use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry::trace::{Span, Tracer, TracerProvider};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};

/// The span of one request that reached its final status: every field a fixed word but
/// the agent's name, which the agent API has already checked (`[A-Za-z0-9._-]{1,64}`).
pub struct RequestSpan<'a> {
    pub agent: &'a str,
    pub verdict: &'static str,
    pub via: &'static str,
    pub risk: &'static str,
    pub front: &'static str,
    pub created: SystemTime,
    pub ended: SystemTime,
}

/// The exporter and its batch, alive for the daemon's life.
pub struct Traces {
    provider: SdkTracerProvider,
    tracer: opentelemetry_sdk::trace::SdkTracer,
}

impl Traces {
    /// Exports to `endpoint` (the collector's base URL; `/v1/traces` is added), a batch
    /// every `delay`. Nothing is sent here: a collector that is down costs spans, never
    /// the start.
    pub fn start(endpoint: &str, delay: Duration) -> Result<Traces, String> {
        let url = format!("{}/v1/traces", endpoint.trim_end_matches('/'));
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(url)
            .with_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("traces.otlp_endpoint: {e}"))?;
        let batch = BatchSpanProcessor::builder(exporter)
            .with_batch_config(
                BatchConfigBuilder::default()
                    .with_scheduled_delay(delay)
                    .build(),
            )
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(batch)
            .with_resource(Resource::builder().with_service_name("execgate").build())
            .build();
        let tracer = provider.tracer("execgate");
        Ok(Traces { provider, tracer })
    }

    /// Queues `request`'s span; the batch thread sends it.
    pub fn request(&self, request: RequestSpan<'_>) {
        let waited = request
            .ended
            .duration_since(request.created)
            .unwrap_or_default();
        let mut span = self
            .tracer
            .span_builder("execgate.request")
            .with_start_time(request.created)
            .with_attributes([
                KeyValue::new("execgate.agent", request.agent.to_owned()),
                KeyValue::new("execgate.verdict", request.verdict),
                KeyValue::new("execgate.via", request.via),
                KeyValue::new("execgate.risk", request.risk),
                KeyValue::new("execgate.front", request.front),
                KeyValue::new("execgate.waiting_ms", waited.as_millis() as i64),
            ])
            .start(&self.tracer);
        span.end_with_timestamp(request.ended);
    }

    /// Sends what is batched and stops the exporter: at shutdown.
    pub fn shutdown(&self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error = %e, "the last spans could not be sent to traces.otlp_endpoint");
        }
    }
}
