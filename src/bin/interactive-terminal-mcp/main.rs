//! `interactive-terminal-mcp`: the MCP server on stdio (or streamable HTTP with `--http`).

mod browser;
mod preflight;

use itmcp::cli;
use itmcp::config::Config;
use itmcp::contract::schema;
use itmcp::mcp::McpServer;
use itmcp::process::reaper;
use itmcp::service::Service;
use rmcp::ServiceExt;

fn main() {
    // The same binary is the spawner of supervised sessions (process::spawner).
    if let Some(code) = itmcp::process::helper_main() {
        std::process::exit(code);
    }
    const NAME: &str = "interactive-terminal-mcp";
    let cfg = Config::from_process();
    itmcp::telemetry::init(cfg.log.as_deref());
    // Before any thread starts: the tokens leave the environment commands inherit.
    cli::hide_secrets(&itmcp::config::SECRET_VARIABLES);
    let withheld = cli::withhold_credentials(cfg.keep_env.as_deref());
    cli::say_withheld(&withheld);
    // A broken schema stops the server here. The validators compile once the server is up
    // (serve, serve_http).
    cli::or_exit(NAME, schema::load(), 1);
    let workers = cli::workers_or_exit(NAME);
    itmcp::process::open_files::raise();
    let policy = cli::or_exit(NAME, itmcp::policy::Policy::load(&cfg.policy), 2);
    cli::install_sandbox(NAME, &cfg.sandbox, &cfg.own_files());
    if cfg.check_config {
        std::process::exit(preflight::report(NAME, &cfg, &withheld));
    }
    let rt = cli::runtime_or_exit(NAME, workers);
    let code = match cfg.http.clone() {
        Some(http) => {
            let token = cli::or_exit(NAME, itmcp::mcp::http::token(&http), 2);
            rt.block_on(serve_http(cfg, policy, http.addr, token))
        }
        None => rt.block_on(serve(cfg, policy)),
    };
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    std::process::exit(code);
}

/// Until SIGTERM or SIGINT.
async fn stop_signal() {
    tokio::select! {
        _ = cli::sigterm() => tracing::info!("SIGTERM"),
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT"),
    }
}

/// Streamable HTTP: a service per session; at a stop signal every session's processes die.
async fn serve_http(
    cfg: Config,
    policy: itmcp::policy::Loaded,
    addr: std::net::SocketAddr,
    token: String,
) -> i32 {
    reaper::become_subreaper();
    reaper::spawn_reaper();
    if let Err(e) = schema::compile_in_background() {
        tracing::warn!(error = %e, "the schemas compile at the first request");
    }
    let new_app = move || Service::new(cfg.clone(), policy.clone());
    let served = itmcp::mcp::http::serve(addr, token, new_app, stop_signal()).await;
    itmcp::process::shutdown().await;
    match served {
        Ok(()) => {
            tracing::info!("stopped; every process the sessions started was killed");
            0
        }
        Err(e) => {
            eprintln!("interactive-terminal-mcp: {e}");
            1
        }
    }
}

async fn serve(cfg: Config, policy: itmcp::policy::Loaded) -> i32 {
    reaper::become_subreaper();
    reaper::spawn_reaper();
    let app = Service::new(cfg, policy);
    let server = match McpServer::new(app.clone()) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot build the tool server");
            return 1;
        }
    };
    let transport = itmcp::mcp::framing::stdio();
    let server = server.ending_with_input(transport.input_end());
    let running = match server.serve(transport).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "MCP initialization failed");
            app.shutdown().await;
            return 1;
        }
    };
    tracing::info!("serving MCP on stdio");
    if let Err(e) = schema::compile_in_background() {
        // The first request that needs a validator compiles it then.
        tracing::warn!(error = %e, "the schemas compile at the first request");
    }
    if app.gui() {
        // The page comes up with the server, not at the first interactive request: a person
        // can sign in before anything needs approving. The host prints its sign-in link.
        let (app, open) = (app.clone(), app.opens_page());
        tokio::spawn(async move {
            match app.start_gui().await {
                Ok(Some(link)) if open => {
                    if let Err(e) = browser::open(&link) {
                        eprintln!(
                            "interactive-terminal-mcp: --open: {e}; open the link above by hand"
                        );
                    }
                }
                Ok(_) => {}
                Err(e) => eprintln!(
                    "interactive-terminal-mcp: --gui: the page is not available: {}; warned commands ask elsewhere (MCP elicitation, then the operator's default)",
                    e
                ),
            }
        });
    }
    let ct = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        r = &mut waiting => {
            if let Err(e) = r {
                tracing::warn!(error = %e, "MCP service ended with an error");
            }
            tracing::info!("client closed the connection");
        }
        _ = cli::sigterm() => {
            tracing::info!("SIGTERM");
            ct.cancel();
        }
        _ = tokio::signal::ctrl_c() => {
            tracing::info!("SIGINT");
            ct.cancel();
        }
    }
    app.shutdown().await;
    tracing::info!("stopped; every process this server started was killed");
    0
}
