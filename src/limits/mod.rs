//! The server's limits as an agent meets them: places under a cap that a burst queues
//! behind (`places`), and which machine resource an OS error says ran out (`resource`), so
//! either is told as a limit to wait out or free, never as an internal error.

pub mod places;
pub mod resource;
