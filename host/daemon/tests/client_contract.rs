//! What the client crate assumes of the daemon's connections holds of the daemon.

/// `sluice_client` replaces a connection idle for half the daemon's header read timeout, as
/// `sluice_api` states it; the server must close idle connections after that same time.
#[test]
fn the_server_closes_idle_connections_when_the_contract_says() {
    assert_eq!(
        sluice_daemon::server::HEADER_READ_TIMEOUT,
        sluice_api::HEADER_READ_TIMEOUT
    );
}
