//! The `mirror-kernel` command: a thin CLI over the library. `kernel` serves Jupyter,
//! `install`/`uninstall` manage the kernelspec, `run` and `exec` execute notebooks and
//! scripts without Jupyter, and `bench` prints the benchmarks' measured ratios.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use mirror_kernel::protocol::{self, kernelspec};
use mirror_kernel::runner;

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
    /// Run a notebook without Jupyter and write its outputs (nbformat 4.5).
    Run {
        notebook: PathBuf,
        /// Where to write the executed notebook (default: NAME.nbconvert.ipynb beside it).
        #[arg(long, short = 'o', conflicts_with = "inplace")]
        output: Option<PathBuf>,
        /// Overwrite the input notebook.
        #[arg(long)]
        inplace: bool,
        /// Seconds one cell may run before it is interrupted.
        #[arg(long)]
        timeout: Option<u64>,
        /// Go on after a failing cell, and exit 0.
        #[arg(long)]
        allow_errors: bool,
    },
    /// Run a Python file without Jupyter, with terminal output; ARGS become `sys.argv[1:]`.
    Exec {
        file: PathBuf,
        /// Arguments for the script, as after `python FILE`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Measure the engine and the interpreter; prints ratios, asserts nothing.
    Bench {
        #[command(subcommand)]
        which: Option<BenchWhich>,
    },
}

#[derive(Subcommand)]
enum BenchWhich {
    /// One epoch of the MNIST-sized MLP on 1 and 2 replicas, against this machine's GEMM peak.
    Train {
        /// cpu (replicas are threads) or gpu (one replica per CUDA GPU).
        #[arg(long, default_value = "cpu", value_parser = ["cpu", "gpu"])]
        device: String,
        /// Samples in the epoch.
        #[arg(long, default_value_t = mirror_kernel::bench::EPOCH_SAMPLES)]
        samples: usize,
    },
    /// Interpreter overhead against python3 on the same machine.
    Interp,
    /// A hand-written GradientTape training loop of the MLP, eager and under tf.function,
    /// as fractions of fit's samples/s.
    Loop {
        /// Synthetic examples per round (the loop makes four rounds).
        #[arg(long, default_value_t = 8192)]
        samples: usize,
    },
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

fn bench(which: Option<BenchWhich>) -> anyhow::Result<ExitCode> {
    use mirror_kernel::bench::{self as b, BenchDevice};
    let run_train = |device: &str, samples: usize| -> anyhow::Result<()> {
        let device = if device == "gpu" {
            BenchDevice::Gpu
        } else {
            BenchDevice::Cpu
        };
        print!("{}", b::train(device, samples).map_err(anyhow::Error::msg)?);
        Ok(())
    };
    match which {
        Some(BenchWhich::Train { device, samples }) => run_train(&device, samples)?,
        Some(BenchWhich::Interp) => println!("{}", b::interp()),
        Some(BenchWhich::Loop { samples }) => {
            print!("{}", b::custom_loop(samples).map_err(anyhow::Error::msg)?)
        }
        None => {
            println!("{}", b::interp());
            print!("{}", b::custom_loop(8192).map_err(anyhow::Error::msg)?);
            run_train("cpu", b::EPOCH_SAMPLES)?;
        }
    }
    Ok(ExitCode::SUCCESS)
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
        Command::Run {
            notebook,
            output,
            inplace,
            timeout,
            allow_errors,
        } => {
            let timeout = timeout.map(std::time::Duration::from_secs);
            // Cells run in the notebook's own folder, as under Jupyter and nbconvert, so
            // files next to it open by their relative names; the paths given on the command
            // line are taken from where the command was typed.
            let here = std::env::current_dir().context("reading the current folder")?;
            let input = here.join(&notebook);
            let output = output.map(|o| here.join(o));
            if let Some(folder) = input.parent().filter(|f| f.is_dir()) {
                std::env::set_current_dir(folder)
                    .with_context(|| format!("entering {}", folder.display()))?;
            }
            let colour = runner::colour_wanted(std::io::stdout().is_terminal());
            let mut progress = runner::RunProgress::new(std::io::stdout(), colour);
            match runner::run_notebook_watched(
                &input,
                output.as_deref(),
                inplace,
                timeout,
                allow_errors,
                &mut |event| progress.show(event),
            ) {
                Ok(summary) => {
                    eprintln!(
                        "ran {} code cells of {} into {}{}",
                        summary.cells_run,
                        notebook.display(),
                        summary
                            .output
                            .strip_prefix(&here)
                            .unwrap_or(&summary.output)
                            .display(),
                        match summary.errors.len() {
                            0 => String::new(),
                            n => format!(" ({n} raised)"),
                        }
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("mirror-kernel run: {e}");
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        Command::Exec { file, args } => {
            let status = runner::exec_script_with_args(&file, &args)
                .with_context(|| format!("running {}", file.display()))?;
            Ok(ExitCode::from(u8::try_from(status).unwrap_or(1)))
        }
        Command::Bench { which } => bench(which),
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
