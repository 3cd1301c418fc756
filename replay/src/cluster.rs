//! Ballista: schedulers and executors that know the filtervm functions, and clients of them.
//!
//! Ballista ships plans between processes by name: a client plans the SQL, the scheduler decodes
//! the logical plan and plans the stages, each executor decodes its tasks and looks each scalar
//! function up in its own function registry. So all three must have `filtervm_match` and
//! `filtervm_route` registered — and for `filtervm_route`, the same subscriptions file, which
//! each process loads itself (nothing but the function's name travels in a plan).

use crate::adapter::Subscriptions;
use crate::session::{Registered, register_functions, session_state};
use ballista::prelude::SessionContextExt;
use ballista_core::extension::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use datafusion::common::{DataFusionError, Result};
use datafusion::prelude::{SessionConfig, SessionContext};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

fn ballista_error(context: &str, e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::External(format!("{context}: {e}").into())
}

/// A Ballista cluster running inside this process: one scheduler, several executors, all on
/// loopback with ports the OS assigns.
#[derive(Debug)]
pub struct InProcessCluster {
    /// The scheduler's address, for [`connect`] (`df://localhost:PORT`).
    pub url: String,
    /// The filtervm functions of each executor (their counters show which executor did work).
    pub executors: Vec<Registered>,
}

/// Starts a scheduler and `executors` executors of `vcores` task slots each, in this process.
pub async fn start_in_process(
    executors: usize,
    vcores: usize,
    subscriptions: Option<Arc<Subscriptions>>,
) -> Result<InProcessCluster> {
    let config = SessionConfig::new_with_ballista();
    let (scheduler_state, _) = session_state(config.clone(), subscriptions.clone())?;
    let address =
        ballista_scheduler::standalone::new_standalone_scheduler_from_state(&scheduler_state)
            .await
            .map_err(|e| ballista_error("starting the scheduler", e))?;
    let grpc = format!("http://localhost:{}", address.port());
    let mut attempts = 0;
    let scheduler = loop {
        match SchedulerGrpcClient::connect(grpc.clone()).await {
            Ok(client) => break client,
            Err(e) if attempts >= 100 => {
                return Err(ballista_error("connecting to the scheduler", e));
            }
            Err(_) => {
                attempts += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    let mut registered = Vec::with_capacity(executors);
    for _ in 0..executors {
        let (state, functions) = session_state(config.clone(), subscriptions.clone())?;
        ballista_executor::new_standalone_executor_from_state(scheduler.clone(), vcores, &state)
            .await
            .map_err(|e| ballista_error("starting an executor", e))?;
        registered.push(functions);
    }
    Ok(InProcessCluster {
        url: format!("df://localhost:{}", address.port()),
        executors: registered,
    })
}

/// A client session of the scheduler at `url` (`df://HOST:PORT`) that knows the filtervm
/// functions (for planning; the executors evaluate them).
pub async fn connect(
    url: &str,
    subscriptions: Option<Arc<Subscriptions>>,
) -> Result<(SessionContext, Registered)> {
    let (state, _) = session_state(SessionConfig::new_with_ballista(), None)?;
    let ctx = SessionContext::remote_with_state(url, state).await?;
    // Making a state a Ballista client resets its scalar functions to Ballista's defaults, so
    // the filtervm functions are registered again, in the client session itself.
    let registered = register_functions(&mut *ctx.state_ref().write(), subscriptions)?;
    Ok((ctx, registered))
}

/// Runs a Ballista scheduler listening on `address` until the process ends; its sessions know
/// the filtervm functions.
pub async fn run_scheduler(
    address: SocketAddr,
    subscriptions: Option<Arc<Subscriptions>>,
) -> Result<()> {
    use ballista_scheduler::cluster::BallistaCluster;
    use ballista_scheduler::config::SchedulerConfig;
    let session_builder = move |config: SessionConfig| {
        session_state(config, subscriptions.clone()).map(|(state, _)| state)
    };
    let config = SchedulerConfig {
        bind_host: address.ip().to_string(),
        bind_port: address.port(),
        override_session_builder: Some(Arc::new(session_builder)),
        override_config_producer: Some(Arc::new(SessionConfig::new_with_ballista)),
        ..SchedulerConfig::default()
    };
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(|e| ballista_error("starting the scheduler", e))?;
    ballista_scheduler::scheduler_process::start_server(cluster, address, Arc::new(config))
        .await
        .map_err(|e| ballista_error("the scheduler stopped", e))
}

/// Where an executor listens and which scheduler it serves.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The scheduler's host.
    pub scheduler_host: String,
    /// The scheduler's port.
    pub scheduler_port: u16,
    /// The host to bind.
    pub bind_host: String,
    /// The host other processes reach this executor at (default: the bind host).
    pub external_host: Option<String>,
    /// The Arrow Flight port (shuffle data).
    pub port: u16,
    /// The gRPC port (tasks).
    pub grpc_port: u16,
    /// Task slots (default: the number of cores).
    pub vcores: Option<usize>,
    /// Where shuffle files go (default: a temporary directory).
    pub work_dir: Option<String>,
}

/// Runs a Ballista executor until the process ends; it evaluates the filtervm functions.
pub async fn run_executor(
    options: ExecutorOptions,
    subscriptions: Option<Arc<Subscriptions>>,
) -> Result<()> {
    use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
    let (state, _) = session_state(SessionConfig::new_with_ballista(), subscriptions)?;
    let defaults = ExecutorProcessConfig::default();
    let config = ExecutorProcessConfig {
        scheduler_host: options.scheduler_host,
        scheduler_port: options.scheduler_port,
        bind_host: options.bind_host,
        external_host: options.external_host,
        port: options.port,
        grpc_port: options.grpc_port,
        vcores: options.vcores.unwrap_or(defaults.vcores),
        work_dir: options.work_dir,
        override_function_registry: Some(Arc::new(BallistaFunctionRegistry::from(&state))),
        ..defaults
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(|e| ballista_error("the executor stopped", e))
}
