//! interactive-terminal-mcp: an MCP server that lets AI agents run and drive terminals.
//!
//! Layers, top to bottom (the map: docs/structure.md): `mcp` (rmcp tool server) → `service`
//! (the contract service: parse, authorize, approve, route, respond) → `contract` (request, aliases,
//! validation, `PM_TERM_*` errors) → `policy` (authorization on parsed argv) → `headless`
//! (pipes) or `adapters` (where a terminal lives: local, bundled, container_bridge) → `terminal`
//! (the AHP terminal core), which `host` serves over AHP/WebSocket. Shared below them:
//! `spool` (output by absolute offset) and `process` (subreaper, process-tree kill).

pub mod adapters;
pub mod cli;
pub mod clock;
pub mod config;
pub mod contract;
pub mod headless;
pub mod host;
pub mod ids;
pub mod limits;
pub mod locks;
pub mod mcp;
pub use itmcp_os as os;
pub use itmcp_policy as policy;
pub mod private_dir;
pub mod process;
pub mod program;
pub mod sandbox;
pub mod service;
pub mod spool;
pub mod stale;
pub mod telemetry;
pub mod terminal;
pub mod text;
pub mod token;
