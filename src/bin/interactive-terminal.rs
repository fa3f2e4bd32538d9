//! `interactive-terminal`: the host terminal service (AHP over WebSocket, and its page).

use itmcp::cli;
use itmcp::host::options::HostStart;
use itmcp::host::{Host, HostConfig};
use itmcp::process::reaper;

/// Resolves when standard input reaches its end (the launcher is gone).
async fn stdin_closed() {
    use tokio::io::AsyncReadExt;
    let mut stdin = tokio::io::stdin();
    let mut buf = [0u8; 256];
    loop {
        match stdin.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

fn main() {
    // The same binary is the spawner of supervised terminals (process::spawner).
    if let Some(code) = itmcp::process::helper_main() {
        std::process::exit(code);
    }
    const NAME: &str = "interactive-terminal";
    let start = HostStart::from_process();
    itmcp::telemetry::init(start.log.as_deref());
    // Before any thread starts: the token leaves the environment the terminals inherit.
    cli::hide_secrets(&[itmcp::host::options::TOKEN_VARIABLE]);
    cli::say_withheld(&cli::withhold_credentials(start.keep_env.as_deref()));
    let workers = cli::workers_or_exit(NAME);
    itmcp::process::open_files::raise();
    cli::install_sandbox(
        NAME,
        &start.sandbox,
        std::slice::from_ref(&start.config.token_file),
    );
    let rt = cli::runtime_or_exit(NAME, workers);
    let code = rt.block_on(run(start.config, start.lifeline));
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    std::process::exit(code);
}

async fn run(cfg: HostConfig, lifeline: bool) -> i32 {
    reaper::become_subreaper();
    reaper::spawn_reaper();
    let host = match Host::bind(cfg).await {
        Ok(h) => h,
        Err(e) => {
            eprintln!("interactive-terminal: {e}");
            println!(
                "{}",
                serde_json::json!({"event": "error", "error": e.to_string()})
            );
            return 2;
        }
    };
    println!("{}", host.ready_line());
    eprintln!(
        "interactive-terminal: serving AHP on ws://{}/ahp (programs present the token)",
        host.addr
    );
    host.shared.page.announce(&host.shared.public_addr);
    let core = host.shared.core.clone();
    let sigterm = itmcp::cli::sigterm();
    let launcher_gone = async {
        if lifeline {
            stdin_closed().await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        _ = host.serve() => {}
        _ = sigterm => tracing::info!("SIGTERM"),
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT"),
        _ = launcher_gone => tracing::info!("the launching server is gone"),
    }
    core.shutdown().await;
    itmcp::process::shutdown().await;
    0
}
