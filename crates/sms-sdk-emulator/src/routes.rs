//! The routes: each provider's send and fetch endpoints, and the emulator's own.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Extension, Path, State};
use axum::response::{IntoResponse as _, Response};
use axum::routing::{get, post};
use http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use serde_json::Value;
use time::OffsetDateTime;

use crate::body::{self, BodyError};
use crate::credentials::{AWS_SNS_CERTIFICATE, keys_json};
use crate::model::Provider;
use crate::observe::Operation;
use crate::provider::{
    AuthRequest, Failure, aws_is_send_text_message, aws_unknown_operation, bandwidth_list, bandwidth_token,
    infobip_logs, sinch_list, twilio_list,
};
use crate::respond::{closing, error_response, json_response};
use crate::send::Reply;
use crate::server::Connection;
use crate::state::App;

type AppState = State<Arc<App>>;

/// The emulator's router.
pub(crate) fn router(app: Arc<App>) -> Router {
    emulator_routes(aws_routes(more_provider_routes(provider_routes(Router::new()))))
        .fallback(|State(app): AppState| async move {
            let response = error_response(StatusCode::NOT_FOUND, "no such route");
            app.report(None, Operation::NoRoute, None, &response);
            response
        })
        .with_state(app)
}

/// Each provider's send, fetch and list endpoints.
fn provider_routes(router: Router<Arc<App>>) -> Router<Arc<App>> {
    router
        .route(
            "/2010-04-01/Accounts/{account}/Messages.json",
            post(|State(app): AppState, connection, Path(account): Path<String>, headers, uri: Uri, body| async move {
                send(&app, connection, Provider::Twilio, Some(&account), &headers, &uri, body).await
            })
            .get(
                |State(app): AppState, Path(account): Path<String>, headers: HeaderMap, uri: Uri| async move {
                    let response =
                        refusal(&app, Provider::Twilio, Some(&account), &headers, &uri).unwrap_or_else(|| {
                            let list = twilio_list(&app.store.list(), uri.query().unwrap_or_default());
                            json_response(StatusCode::OK, &list)
                        });
                    app.report(Some(Provider::Twilio), Operation::List, None, &response);
                    response
                },
            ),
        )
        .route(
            "/2010-04-01/Accounts/{account}/Messages/{file}",
            get(|State(app): AppState, Path(path): Path<(String, String)>, headers: HeaderMap, uri: Uri| async move {
                let (account, file) = path;
                let sid = file.strip_suffix(".json").unwrap_or_default();
                lookup(&app, Provider::Twilio, Some(&account), &headers, &uri, sid)
            }),
        )
        .route(
            "/v2/messages",
            post(|State(app): AppState, connection, headers, uri: Uri, body| async move {
                send(&app, connection, Provider::Telnyx, None, &headers, &uri, body).await
            }),
        )
        .route(
            "/v2/messages/{id}",
            get(|State(app): AppState, Path(id): Path<String>, headers: HeaderMap, uri: Uri| async move {
                lookup(&app, Provider::Telnyx, None, &headers, &uri, &id)
            }),
        )
        .route(
            "/v1/Account/{account}/Message/",
            post(|State(app): AppState, connection, Path(account): Path<String>, headers, uri: Uri, body| async move {
                send(&app, connection, Provider::Plivo, Some(&account), &headers, &uri, body).await
            }),
        )
        .route(
            "/v1/Account/{account}/Message/{id}/",
            get(|State(app): AppState, Path(path): Path<(String, String)>, headers: HeaderMap, uri: Uri| async move {
                let (account, id) = path;
                lookup(&app, Provider::Plivo, Some(&account), &headers, &uri, &id)
            }),
        )
        .route(
            "/v1/messages",
            post(|State(app): AppState, connection, headers, uri: Uri, body| async move {
                send(&app, connection, Provider::Vonage, None, &headers, &uri, body).await
            }),
        )
        .route(
            "/xms/v1/{plan}/batches",
            post(|State(app): AppState, connection, Path(plan): Path<String>, headers, uri: Uri, body| async move {
                send(&app, connection, Provider::Sinch, Some(&plan), &headers, &uri, body).await
            })
            .get(
                |State(app): AppState, Path(plan): Path<String>, headers: HeaderMap, uri: Uri| async move {
                    let response = refusal(&app, Provider::Sinch, Some(&plan), &headers, &uri).unwrap_or_else(|| {
                        let list = sinch_list(&app.store.list(), uri.query().unwrap_or_default());
                        json_response(StatusCode::OK, &list)
                    });
                    app.report(Some(Provider::Sinch), Operation::List, None, &response);
                    response
                },
            ),
        )
        .route(
            "/xms/v1/{plan}/batches/{id}",
            get(|State(app): AppState, Path(path): Path<(String, String)>, headers: HeaderMap, uri: Uri| async move {
                let (plan, id) = path;
                lookup(&app, Provider::Sinch, Some(&plan), &headers, &uri, &id)
            }),
        )
}

/// Infobip's and Bandwidth's send, list and token endpoints.
fn more_provider_routes(router: Router<Arc<App>>) -> Router<Arc<App>> {
    router
        .route(
            "/sms/3/messages",
            post(|State(app): AppState, connection, headers, uri: Uri, body| async move {
                send(&app, connection, Provider::Infobip, None, &headers, &uri, body).await
            }),
        )
        .route(
            "/sms/3/logs",
            get(|State(app): AppState, headers: HeaderMap, uri: Uri| async move {
                let response = refusal(&app, Provider::Infobip, None, &headers, &uri).unwrap_or_else(|| {
                    let logs = infobip_logs(&app.store.list(), uri.query().unwrap_or_default());
                    json_response(StatusCode::OK, &logs)
                });
                app.report(Some(Provider::Infobip), Operation::List, None, &response);
                response
            }),
        )
        .route(
            "/api/v2/users/{account}/messages",
            post(|State(app): AppState, connection, Path(account): Path<String>, headers, uri: Uri, body| async move {
                send(&app, connection, Provider::Bandwidth, Some(&account), &headers, &uri, body).await
            })
            .get(
                |State(app): AppState, Path(account): Path<String>, headers: HeaderMap, uri: Uri| async move {
                    let response =
                        refusal(&app, Provider::Bandwidth, Some(&account), &headers, &uri).unwrap_or_else(|| {
                            let list = bandwidth_list(&app.store.list(), uri.query().unwrap_or_default());
                            json_response(StatusCode::OK, &list)
                        });
                    app.report(Some(Provider::Bandwidth), Operation::List, None, &response);
                    response
                },
            ),
        )
        .route(
            "/api/v1/oauth2/token",
            post(|State(app): AppState, headers: HeaderMap, body: Body| async move {
                let response = match body::read(body, &headers, app.config.body_limits()).await {
                    Ok(body) => {
                        let (status, answer) = bandwidth_token(&headers, &body, OffsetDateTime::now_utc());
                        json_response(status, &answer)
                    }
                    Err(_) => closing(json_response(
                        StatusCode::BAD_REQUEST,
                        &serde_json::json!({"error": "invalid_request"}),
                    )),
                };
                app.report(Some(Provider::Bandwidth), Operation::Token, None, &response);
                response
            }),
        )
}

/// AWS's one route, and the providers' routes before it.
fn aws_routes(router: Router<Arc<App>>) -> Router<Arc<App>> {
    router
        // AWS JSON 1.0: every operation is `POST /`, named by `X-Amz-Target`.
        .route(
            "/",
            post(|State(app): AppState, connection, headers: HeaderMap, uri: Uri, body: Body| async move {
                if aws_is_send_text_message(&headers) {
                    return send(&app, connection, Provider::Aws, None, &headers, &uri, body).await;
                }
                // Read (or drain) the body first, as a send's, so that the client reads the answer.
                let read = body::read(body, &headers, app.config.body_limits()).await;
                let mut response = Provider::Aws.finish(aws_unknown_operation().response());
                if read.is_err() {
                    response = closing(response);
                }
                app.report(Some(Provider::Aws), Operation::NoRoute, None, &response);
                response
            }),
        )
}

/// The emulator's own endpoints: inspection, keys, inbound messages.
fn emulator_routes(router: Router<Arc<App>>) -> Router<Arc<App>> {
    router
        .route(
            "/_emulator/messages",
            get(|State(app): AppState| async move {
                let response = json_response(StatusCode::OK, &messages_json(&app));
                app.report(None, Operation::Inspect, None, &response);
                response
            })
            .delete(|State(app): AppState| async move {
                app.store.clear();
                let response = StatusCode::NO_CONTENT.into_response();
                app.report(None, Operation::Clear, None, &response);
                response
            }),
        )
        .route(
            "/_emulator/keys",
            get(|State(app): AppState| async move {
                let response = json_response(StatusCode::OK, &keys_json());
                app.report(None, Operation::Keys, None, &response);
                response
            }),
        )
        .route(
            "/_emulator/aws/sns-certificate.pem",
            get(|State(app): AppState| async move {
                let pem = [(header::CONTENT_TYPE, HeaderValue::from_static("application/x-pem-file"))];
                let response = (StatusCode::OK, pem, AWS_SNS_CERTIFICATE).into_response();
                app.report(None, Operation::Keys, None, &response);
                response
            }),
        )
        .route(
            "/_emulator/inbound",
            post(|State(app): AppState, headers: HeaderMap, body: Body| async move { inbound(&app, &headers, body).await }),
        )
}

fn messages_json(app: &App) -> Value {
    serde_json::to_value(app.store.list()).unwrap_or_default()
}

/// `POST /_emulator/inbound`, its body read within the limits.
async fn inbound(app: &App, headers: &HeaderMap, body: Body) -> Response {
    let response = match body::read(body, headers, app.config.body_limits()).await {
        Ok(body) => return app.inbound(&body).await,
        Err(BodyError::TooLarge) => {
            let message = format!("the request body is over {} bytes", app.config.body_limit);
            closing(error_response(StatusCode::PAYLOAD_TOO_LARGE, &message))
        }
        Err(BodyError::Unreadable) => error_response(StatusCode::BAD_REQUEST, "the request body could not be read"),
    };
    app.report(None, Operation::Inbound, None, &response);
    response
}

/// Reads the body within the limits, handles the send, and turns the reply into a response or
/// a connection fault.
async fn send(
    app: &Arc<App>,
    Extension(connection): Extension<Connection>,
    provider: Provider,
    account: Option<&str>,
    headers: &HeaderMap,
    uri: &Uri,
    body: Body,
) -> Response {
    let body = body::read(body, headers, app.config.body_limits()).await;
    let (reply, delay) = app.send(provider, account, headers, uri, body.as_deref().map_err(|error| *error));
    // The request is already listed (and its message created): a client that gives up during the
    // wait leaves a message it never heard about.
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    match reply {
        Reply::Respond(response) => return provider.finish(response),
        Reply::Hold => {}
        Reply::Reset => connection.reset(),
        Reply::Drop => connection.close(),
    }
    // Never answer: the connection ends when the client gives up, or as signalled above.
    std::future::pending().await
}

/// The provider's auth error when the request (a `GET` of `uri`) does not carry its credentials.
fn refusal(app: &App, provider: Provider, account: Option<&str>, headers: &HeaderMap, uri: &Uri) -> Option<Response> {
    let request = AuthRequest {
        headers,
        account,
        method: "GET",
        path: uri.path(),
        query: uri.query().unwrap_or_default(),
        body: &[],
        keys: app.keys,
        now: OffsetDateTime::now_utc(),
    };
    let denied = provider.authenticate(&request).err()?;
    Some(provider.finish(provider.error(Failure::Auth(denied)).response()))
}

/// A provider's message fetch.
fn lookup(app: &App, provider: Provider, account: Option<&str>, headers: &HeaderMap, uri: &Uri, id: &str) -> Response {
    let response = refusal(app, provider, account, headers, uri).unwrap_or_else(|| {
        match app.store.find(provider, id).and_then(|message| provider.resource(&message)) {
            Some(resource) => json_response(StatusCode::OK, &resource),
            None => provider.error(Failure::NotFound).response(),
        }
    });
    app.report(Some(provider), Operation::Lookup, None, &response);
    response
}
