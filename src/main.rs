//! The `mirror-kernel` command: a thin CLI over the library. `kernel` serves Jupyter,
//! `install`/`uninstall` manage the kernelspec; `run`, `exec` and `bench` are declared here
//! and wired to the notebook runner and benchmarks as those land.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use mirror_kernel::protocol::{self, kernelspec};

#[derive(Parser)]
#[command(
    name = "mirror-kernel",
    version,
    about = "A Jupyter kernel for Keras-style multi-device training"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve Jupyter on the sockets named in a connection file.
    Kernel {
        /// The connection file Jupyter wrote.
        #[arg(short = 'f', long = "connection-file")]
        connection_file: PathBuf,
    },
    /// Install the `mirror` kernelspec (default: for this user).
    Install {
        #[command(flatten)]
        location: LocationArgs,
        /// Default number of logical CPU devices (MIRROR_LOGICAL_CPUS in kernel.json).
        #[arg(long)]
        logical_cpus: Option<u32>,
    },
    /// Remove the `mirror` kernelspec.
    Uninstall {
        #[command(flatten)]
        location: LocationArgs,
    },
    /// Run a notebook without Jupyter and write its outputs back.
    Run { notebook: PathBuf },
    /// Run a Python file without Jupyter.
    Exec { file: PathBuf },
    /// Run the benchmarks.
    Bench,
}

#[derive(Args)]
#[group(multiple = false)]
struct LocationArgs {
    /// The user's Jupyter data dir (JUPYTER_DATA_DIR or ~/.local/share/jupyter).
    #[arg(long)]
    user: bool,
    /// The active Python environment (VIRTUAL_ENV or python3's sys.prefix).
    #[arg(long)]
    sys_prefix: bool,
    /// PREFIX/share/jupyter.
    #[arg(long, value_name = "DIR")]
    prefix: Option<PathBuf>,
}

impl LocationArgs {
    fn location(&self) -> kernelspec::Location {
        match (&self.prefix, self.sys_prefix) {
            (Some(p), _) => kernelspec::Location::Prefix(p.clone()),
            (None, true) => kernelspec::Location::SysPrefix,
            (None, false) => kernelspec::Location::User,
        }
    }
}

fn not_available(what: &str) -> anyhow::Result<ExitCode> {
    eprintln!("mirror-kernel {what}: not available yet");
    Ok(ExitCode::from(2))
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Kernel { connection_file } => {
            protocol::run_kernel(&connection_file)
                .with_context(|| format!("serving {}", connection_file.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Install {
            location,
            logical_cpus,
        } => {
            let dir = kernelspec::install(&location.location(), logical_cpus)
                .context("installing the kernelspec")?;
            println!(
                "Installed kernelspec {} in {}",
                kernelspec::KERNEL_NAME,
                dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Uninstall { location } => {
            match kernelspec::uninstall(&location.location()).context("removing the kernelspec")? {
                Some(dir) => println!("Removed {}", dir.display()),
                None => println!("No kernelspec {} there", kernelspec::KERNEL_NAME),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run { .. } => not_available("run"),
        Command::Exec { .. } => not_available("exec"),
        Command::Bench => not_available("bench"),
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mirror-kernel: {e:#}");
            ExitCode::FAILURE
        }
    }
}
