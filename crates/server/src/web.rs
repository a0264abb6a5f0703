//! The web chat page at `/`: plain HTML, CSS and JavaScript compiled into the binary, so the
//! server needs no files next to it. The page talks to `/ws` (see `static/app.js`).

use actix_web::{HttpResponse, web};

const INDEX: &str = include_str!("../static/index.html");
const SCRIPT: &str = include_str!("../static/app.js");
const STYLE: &str = include_str!("../static/style.css");

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(|| page(INDEX, "text/html; charset=utf-8")))
        .route(
            "/static/app.js",
            web::get().to(|| page(SCRIPT, "text/javascript; charset=utf-8")),
        )
        .route(
            "/static/style.css",
            web::get().to(|| page(STYLE, "text/css; charset=utf-8")),
        );
}

async fn page(body: &'static str, content_type: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header((
            "Content-Security-Policy",
            "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:",
        ))
        .body(body)
}
