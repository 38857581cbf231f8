//! The `prvsight` command line: convert, inspect and check, on the same core as the browser page.

#[cfg(target_family = "wasm")]
fn main() {}

#[cfg(not(target_family = "wasm"))]
fn main() {
    // Small inputs read in place (the library maps nothing unless the program asks).
    #[cfg(target_os = "linux")]
    mapped::enable();
    std::process::exit(cli::main());
}

#[cfg(target_os = "linux")]
#[path = "prvsight/mapped.rs"]
mod mapped;

#[cfg(not(target_family = "wasm"))]
#[path = "prvsight/check.rs"]
mod check;
#[cfg(not(target_family = "wasm"))]
#[path = "prvsight/compare.rs"]
mod compare;

#[cfg(not(target_family = "wasm"))]
#[path = "prvsight/metrics.rs"]
mod metrics;
#[cfg(not(target_family = "wasm"))]
#[path = "prvsight/parts.rs"]
mod parts;
#[cfg(not(target_family = "wasm"))]
#[path = "prvsight/synth.rs"]
mod synth;
#[cfg(not(target_family = "wasm"))]
#[path = "prvsight/timeline.rs"]
mod timeline;

#[cfg(not(target_family = "wasm"))]
mod cli {
    use std::fs::File;
    use std::io::{BufWriter, IsTerminal, Write};
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use clap::{Parser, Subcommand};
    use prvsight::atomic_output::AtomicOutput;
    use prvsight::model::Sink;
    use prvsight::nsys::Export;
    use prvsight::page_cache::DropBehindFile;
    use prvsight::paraver::background::BackgroundWriter;
    use prvsight::paraver::gzip::GzipWriter;
    use prvsight::paraver::ParaverWriter;
    use prvsight::pipeline::{self, Progress};
    use prvsight::{Error, Options, Result};

    #[derive(Parser)]
    #[command(
        name = "prvsight",
        version,
        about = "Nsight Systems SQLite exports → Paraver traces and GPU efficiency metrics"
    )]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Subcommand)]
    enum Command {
        /// Convert one or more exports (one per rank/process) into one Paraver trace, or one
        /// Chrome/Perfetto trace (-o NAME.json or NAME.json.gz).
        Convert {
            /// Exports written by `nsys export --type sqlite`.
            #[arg(required = true)]
            inputs: Vec<PathBuf>,
            /// Output trace: NAME.prv or NAME.prv.gz (NAME.pcf and NAME.row are written beside it),
            /// or NAME.json or NAME.json.gz (Chrome Trace Event Format: Perfetto, chrome://tracing).
            #[arg(short, long)]
            output: Option<PathBuf>,
            #[command(flatten)]
            select: Selection,
            /// Deflate level of a .prv.gz or .json.gz output, 1 (fastest) to 9 (smallest) [default: 2].
            #[arg(long, value_parser = clap::value_parser!(u32).range(1..=9))]
            gzip_level: Option<u32>,
            /// Convert part K of N (K = 1 … N: the K-th of N shares of the inputs) into the part
            /// file -o, which `prvsight merge` joins with the others into this conversion's trace.
            #[arg(long, value_name = "K/N", conflicts_with = "gzip_level")]
            part: Option<String>,
            /// No progress bar and no summary.
            #[arg(short, long)]
            quiet: bool,
        },
        /// Join every part of `convert IN… --part K/N` into the trace (and metrics) one
        /// `convert` of all the inputs writes.
        Merge(crate::parts::MergeArgs),
        /// Show what an export holds: nsys and schema versions, tables and row counts, resources.
        Info {
            #[arg(required = true)]
            inputs: Vec<PathBuf>,
            /// Clock alignment of several reports: session-start (default), mpi-init, none.
            #[arg(long, default_value = "session-start")]
            align: String,
        },
        /// Check a Paraver trace (.prv or .prv.gz with its .pcf and .row) against the format rules.
        Check {
            trace: PathBuf,
            /// Accept threads whose states leave gaps in [0, end] (traces not written by prvsight).
            #[arg(long)]
            allow_state_gaps: bool,
            /// Also check that these Paraver cfgs apply to the trace (repeatable).
            #[arg(long = "cfg")]
            cfgs: Vec<PathBuf>,
            /// Also hold the trace against the exports it was converted from (repeatable): each
            /// GPU stream's kernel and memory-operation time must equal the export's, from SQL.
            #[arg(long = "against")]
            against: Vec<PathBuf>,
        },
        /// Convert exports into one zip for Paraver: trace (.prv.gz .pcf .row), cfgs/, metrics.json, README.txt.
        Bundle {
            /// Exports written by `nsys export --type sqlite` (one per rank/process).
            #[arg(required = true)]
            inputs: Vec<PathBuf>,
            /// Output archive NAME.zip; NAME also names the folder and the trace files inside.
            #[arg(short, long)]
            output: PathBuf,
            #[command(flatten)]
            select: Selection,
            /// Store the .prv uncompressed in the archive.
            #[arg(long)]
            no_gzip: bool,
            /// Deflate level of the .prv.gz: 1 (fastest) to 9 (smallest).
            #[arg(long, default_value_t = prvsight::paraver::TRACE_GZIP_LEVEL, value_parser = clap::value_parser!(u32).range(1..=9), conflicts_with = "no_gzip")]
            gzip_level: u32,
            /// Leave metrics.json out.
            #[arg(long)]
            no_metrics: bool,
            /// No summary.
            #[arg(short, long)]
            quiet: bool,
        },
        /// GPU efficiency metrics (POP/TALP device factors, time breakdown, overlap, top kernels, NVTX ranges, MPI ranks).
        Metrics(crate::metrics::MetricsArgs),
        /// The timeline of a view (thread states, kernels, MPI, NVTX…) as text, one line per row.
        Timeline(crate::timeline::TimelineArgs),
        /// Compare two runs and say which efficiency factor moved the parallel efficiency.
        Compare {
            /// Run A: a metrics report (`metrics --json`, a bundle's metrics.json) or an export.
            a: PathBuf,
            /// Run B, likewise.
            b: PathBuf,
            /// Print the comparison as JSON (schema: docs/METRICS.md).
            #[arg(long)]
            json: bool,
        },
        /// Write a synthetic nsys export of a built-in scenario (test data: NCCL, several GPUs,
        /// CUDA graphs, GPU metrics, GPU memory usage, OpenMP): ddp4, zero3, pipeline4, graphs,
        /// graph_nodes, gpu_metrics, gpu_memory, openmp, cpu_counters, nic, nvtx_payloads; or `mpi_run`: an N-rank
        /// MPI+GPU run, one export per rank, into the folder -o.
        #[command(hide = true)]
        Synth {
            scenario: String,
            /// Output .sqlite file (replaced if it exists); for mpi_run a folder.
            #[arg(short, long)]
            output: PathBuf,
            /// Moves host-side timings only; the same seed gives the same bytes.
            #[arg(long, default_value_t = 1)]
            seed: u64,
            /// Also print the scenario's expected values (JSON) on stdout.
            #[arg(long)]
            spec: bool,
            /// mpi_run: ranks, ranks a node, iterations.
            #[arg(long, default_value_t = 4)]
            ranks: u32,
            #[arg(long, default_value_t = 4)]
            ranks_per_node: u32,
            #[arg(long, default_value_t = 10)]
            iterations: u32,
        },
    }

    /// What to convert and how to lay it out in time (shared by convert and bundle).
    #[derive(clap::Args, Clone, Debug)]
    pub struct Selection {
        /// Record families to convert, comma-separated: kernel,memcpy,memset,cuda-api,nvtx,mpi,osrt,openacc,gpu-metrics,sched,graphs,cuda-event,pthread,gpu-memory,openmp,cpu-counters,nic (default: all present).
        #[arg(short = 't', long = "trace")]
        pub trace: Option<String>,
        /// Clock alignment of several reports: session-start (default), mpi-init, none.
        #[arg(long, default_value = "session-start")]
        pub align: String,
        /// Keep only the time inside an NVTX range: NAME (first to last instance) or NAME:N (the N-th).
        #[arg(short = 'f', long = "nvtx-range", conflicts_with = "window")]
        pub nvtx_range: Option<String>,
        /// Keep only a time window of the trace, e.g. 1.5s..2s (units ns, us, ms, s).
        #[arg(long)]
        pub window: Option<String>,
        /// Leave regions shorter than this out of the trace's events, per family: kernel=5us,cuda-api=20us.
        #[arg(long = "min-duration")]
        pub min_duration: Option<String>,
        /// TOML file naming NVTX domains whose payload fields become events:
        /// `[domains.NAME]` with `payloads = ["field", …]` (docs/TRACE-FORMAT.md).
        #[arg(long = "nvtx-config")]
        pub nvtx_config: Option<PathBuf>,
        /// How rows are put in time order: auto (per-resource runs where possible) or sql (the
        /// reference path: SQL sorts only). The output is the same; for testing and benchmarks.
        #[arg(long = "read-order", default_value = "auto", hide = true)]
        pub read_order: String,
        /// Read on a second thread while this one writes: auto or off. The output is the same;
        /// for testing and benchmarks.
        #[arg(long = "read-ahead", default_value = "auto", hide = true)]
        pub read_ahead: String,
        /// Read table pages directly (auto) or every row through SQLite (sqlite). The output is
        /// the same; for testing and benchmarks.
        #[arg(long = "read-pages", default_value = "auto", hide = true)]
        pub read_pages: String,
        /// Give the reading thread helper threads: auto (where the machine has the cores), on
        /// or off. The output is the same; for testing and benchmarks.
        #[arg(long = "read-helpers", default_value = "auto", hide = true)]
        pub read_helpers: String,
        /// Read many inputs a group at a time: auto (64 a group past 128 inputs), off, or N
        /// inputs a group. The output is the same; for testing and benchmarks.
        #[arg(long = "read-groups", default_value = "auto", hide = true)]
        pub read_groups: String,
    }

    impl Selection {
        pub fn options(&self) -> Result<Options> {
            let mut o = Options::default();
            if let Some(t) = &self.trace {
                o.families = Some(Options::parse_families(t).map_err(Error::Usage)?);
            }
            o.align = self.align.parse().map_err(Error::Usage)?;
            if let Some(r) = &self.nvtx_range {
                o.chop = Some(prvsight::options::Chop::parse_nvtx(r).map_err(Error::Usage)?);
            }
            if let Some(w) = &self.window {
                o.chop = Some(prvsight::options::Chop::parse_window(w).map_err(Error::Usage)?);
            }
            if let Some(m) = &self.min_duration {
                o.min_duration = prvsight::options::parse_min_durations(m).map_err(Error::Usage)?;
            }
            if let Some(path) = &self.nvtx_config {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| Error::Usage(format!("--nvtx-config {}: {e}", path.display())))?;
                let file = path.display().to_string();
                o.nvtx_payloads = Some(prvsight::nvtx_config::NvtxConfig::parse(&file, &text)?);
            }
            o.read_order = (self.read_order.parse())
                .map_err(|e| Error::Usage(format!("--read-order: {e}")))?;
            o.read_ahead = (self.read_ahead.parse())
                .map_err(|e| Error::Usage(format!("--read-ahead: {e}")))?;
            o.read_pages = (self.read_pages.parse())
                .map_err(|e| Error::Usage(format!("--read-pages: {e}")))?;
            o.read_helpers = (self.read_helpers.parse())
                .map_err(|e| Error::Usage(format!("--read-helpers: {e}")))?;
            o.read_groups = (self.read_groups.parse())
                .map_err(|e| Error::Usage(format!("--read-groups: {e}")))?;
            Ok(o)
        }
    }

    pub fn main() -> i32 {
        let cli = Cli::parse();
        let result = match cli.command {
            Command::Convert {
                inputs,
                output,
                select,
                gzip_level: _,
                part: Some(part),
                quiet,
            } => select.options().and_then(|o| {
                crate::parts::convert_part(&inputs, output.as_deref(), &o, &part, quiet)
            }),
            Command::Convert {
                inputs,
                output,
                select,
                gzip_level,
                part: None,
                quiet,
            } => select
                .options()
                .and_then(|o| convert(&inputs, output, &o, gzip_level, quiet)),
            Command::Merge(args) => crate::parts::merge(&args),
            Command::Bundle {
                inputs,
                output,
                select,
                no_gzip,
                gzip_level,
                no_metrics,
                quiet,
            } => {
                let gzip = (!no_gzip).then_some(gzip_level);
                select
                    .options()
                    .and_then(|o| bundle(&inputs, &output, &o, gzip, !no_metrics, quiet))
            }
            Command::Info { inputs, align } => info(&inputs, &align),
            Command::Check {
                trace,
                allow_state_gaps,
                cfgs,
                against,
            } => crate::check::run(&trace, allow_state_gaps, &cfgs, &against),
            Command::Metrics(args) => crate::metrics::run(&args),
            Command::Compare { a, b, json } => crate::compare::run(&a, &b, json),
            Command::Timeline(args) => crate::timeline::run(&args),
            Command::Synth {
                scenario,
                output,
                seed,
                spec,
                ranks,
                ranks_per_node,
                iterations,
            } if scenario == "mpi_run" => {
                let run = prvsight::synth::mpi_run::MpiRun {
                    ranks,
                    ranks_per_node,
                    iterations,
                    seed,
                };
                crate::synth::run(&run, &output, spec)
            }
            Command::Synth {
                scenario,
                output,
                seed,
                spec,
                ..
            } => crate::synth::scenario(&scenario, &output, seed, spec),
        };
        match result {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("prvsight: error: {e}");
                match e {
                    Error::Usage(_) => 2,
                    _ => 1,
                }
            }
        }
    }

    /// `out.prv.gz` → (`out.prv.gz`, `out.pcf`, `out.row`, gzip?).
    fn output_paths(out: PathBuf) -> Result<(PathBuf, PathBuf, PathBuf, bool)> {
        let s = out.to_string_lossy().to_string();
        let (stem, gz) = if let Some(stem) = s.strip_suffix(".prv.gz") {
            (stem.to_owned(), true)
        } else if let Some(stem) = s.strip_suffix(".prv") {
            (stem.to_owned(), false)
        } else {
            return Err(Error::Usage(format!(
                "output '{s}' must end in .prv, .prv.gz, .json or .json.gz"
            )));
        };
        Ok((
            out,
            PathBuf::from(format!("{stem}.pcf")),
            PathBuf::from(format!("{stem}.row")),
            gz,
        ))
    }

    /// A command's output files, given their names only once all of them are written: a failed
    /// command leaves the earlier outputs as they were and no partial ones (prvsight::atomic_output).
    #[derive(Default)]
    pub(crate) struct Outputs(Vec<AtomicOutput>);

    impl Outputs {
        pub(crate) fn file(&mut self, p: &Path) -> Result<File> {
            let (output, file) =
                AtomicOutput::create(p).map_err(|e| Error::write(p.display(), e))?;
            self.0.push(output);
            Ok(file)
        }

        pub(crate) fn buffered(&mut self, p: &Path) -> Result<BufWriter<File>> {
            Ok(BufWriter::with_capacity(1 << 20, self.file(p)?))
        }

        /// The trace's file: its pages dropped from the cache once written back
        /// (prvsight::page_cache), and written on a thread of its own where a core is free for
        /// it (src/paraver/background.rs), so the kernel's copy into the page cache runs beside
        /// the sinks without taking turns with the reading thread.
        pub(crate) fn trace(&mut self, p: &Path, opts: &Options) -> Result<Box<dyn Write + Send>> {
            let file = DropBehindFile::new(self.file(p)?);
            let spare_core = std::thread::available_parallelism().is_ok_and(|n| n.get() > 2);
            if !opts.second_thread_allowed() || !spare_core {
                return Ok(Box::new(BufWriter::with_capacity(1 << 20, file)));
            }
            Ok(Box::new(BackgroundWriter::new(file)))
        }

        /// Names the outputs, which must be written, flushed and closed.
        pub(crate) fn commit(self) -> Result<()> {
            for output in self.0 {
                let dest = output.dest().display().to_string();
                output.commit().map_err(|e| Error::write(dest, e))?;
            }
            Ok(())
        }
    }

    pub(crate) fn open_all(inputs: &[PathBuf]) -> Result<Vec<Export>> {
        inputs.iter().map(|p| Export::open_path(p)).collect()
    }

    /// `prvsight bundle`: the same archive as the page's "download bundle" (src/bundle.rs).
    fn bundle(
        inputs: &[PathBuf],
        output: &Path,
        opts: &Options,
        gzip: Option<u32>,
        metrics: bool,
        quiet: bool,
    ) -> Result<()> {
        use prvsight::bundle::{stem_for, write_bundle, BundleOptions};
        let name = output
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let Some(stem) = name.strip_suffix(".zip").filter(|s| !s.is_empty()) else {
            return Err(Error::Usage(format!(
                "output '{}' must be NAME.zip",
                output.display()
            )));
        };
        let bopts = BundleOptions {
            stem: stem_for(&[stem]),
            gzip,
            metrics: metrics.then(Default::default),
            timeline: None,
        };
        let exports = open_all(inputs)?;
        let mut outputs = Outputs::default();
        let zip = outputs.buffered(output)?;
        let (done, zip) = write_bundle(&exports, opts, &bopts, zip, &mut |_| true)?;
        zip.into_inner()
            .map_err(|e| Error::write(output.display(), e.into_error()))?;
        outputs.commit()?;
        for w in &done.summary.warnings {
            eprintln!("prvsight: warning: {w}");
        }
        if !quiet {
            eprintln!(
                "prvsight: wrote {} ({} records)",
                output.display(),
                done.summary.records
            );
        }
        Ok(())
    }

    fn convert(
        inputs: &[PathBuf],
        output: Option<PathBuf>,
        opts: &Options,
        gzip_level: Option<u32>,
        quiet: bool,
    ) -> Result<()> {
        let out = output.unwrap_or_else(|| inputs[0].with_extension("prv"));
        let name = out.to_string_lossy();
        let json_gz = [(".json", false), (".json.gz", true)]
            .into_iter()
            .find(|(ext, _)| name.ends_with(ext));
        if gzip_level.is_some() && !name.ends_with(".gz") {
            return Err(Error::Usage(
                "--gzip-level applies to a .prv.gz or .json.gz output".into(),
            ));
        }
        if let Some((_, gz)) = json_gz {
            let level = gzip_level.unwrap_or(prvsight::paraver::TRACE_GZIP_LEVEL);
            return convert_json(inputs, &out, opts, gz.then_some(level), quiet);
        }
        // The output's name is checked before the inputs are opened.
        output_paths(out.clone())?;
        let exports = open_all(inputs)?;
        let started = Instant::now();
        let show = !quiet && std::io::stderr().is_terminal();
        let mut progress = progress_bar(show);
        let mut outputs = Outputs::default();
        let summary = write_trace(&mut outputs, &out, opts, gzip_level, &mut [], &mut |s| {
            pipeline::run(&exports, opts, s, &mut progress)
        })?;
        // Every file is flushed and closed here (the writers were dropped).
        outputs.commit()?;
        report(&summary, &out, started, quiet, show);
        Ok(())
    }

    /// Writes the Paraver trace `out` (NAME.prv or NAME.prv.gz, with NAME.pcf and NAME.row) into
    /// `outputs` as `run` feeds the Paraver writer and the `extra` sinks; `gzip_level` of a
    /// .prv.gz (2 where not given).
    pub(crate) fn write_trace(
        outputs: &mut Outputs,
        out: &Path,
        opts: &Options,
        gzip_level: Option<u32>,
        extra: &mut [&mut dyn Sink],
        run: &mut dyn FnMut(&mut [&mut dyn Sink]) -> Result<pipeline::Summary>,
    ) -> Result<pipeline::Summary> {
        let (prv_path, pcf_path, row_path, gz) = output_paths(out.to_path_buf())?;
        if gzip_level.is_some() && !gz {
            return Err(Error::Usage(
                "--gzip-level applies to a .prv.gz output".into(),
            ));
        }
        let pcf = outputs.buffered(&pcf_path)?;
        let row = outputs.buffered(&row_path)?;
        let prv_file = outputs.trace(&prv_path, opts)?;
        let mut feed = |w: &mut dyn Sink| {
            let mut sinks: Vec<&mut dyn Sink> = vec![w];
            sinks.extend(extra.iter_mut().map(|s| &mut **s as &mut dyn Sink));
            run(&mut sinks)
        };
        if !gz {
            let mut w = ParaverWriter::new(Box::new(prv_file), Box::new(pcf), Box::new(row));
            return feed(&mut w);
        }
        let level = gzip_level.unwrap_or(prvsight::paraver::TRACE_GZIP_LEVEL);
        let mut enc = GzipWriter::new(prv_file, level, opts);
        let summary = {
            let mut w = ParaverWriter::new(Box::new(&mut enc), Box::new(pcf), Box::new(row));
            feed(&mut w)?
        };
        enc.finish()
            .and_then(|mut file| file.flush())
            .map_err(|e| Error::write(prv_path.display(), e))?;
        Ok(summary)
    }

    /// `convert … -o OUT.json[.gz]`: the Chrome/Perfetto trace (src/chrome), written and
    /// named as the .prv is; `gzip`: the level of a .json.gz.
    fn convert_json(
        inputs: &[PathBuf],
        out: &Path,
        opts: &Options,
        gzip: Option<u32>,
        quiet: bool,
    ) -> Result<()> {
        use prvsight::chrome::ChromeWriter;
        let exports = open_all(inputs)?;
        let started = Instant::now();
        let show = !quiet && std::io::stderr().is_terminal();
        let mut progress = progress_bar(show);
        let mut outputs = Outputs::default();
        let file = outputs.trace(out, opts)?;
        let (summary, stats) = if let Some(level) = gzip {
            let mut enc = GzipWriter::new(file, level, opts);
            let done = {
                let mut w = ChromeWriter::new(Box::new(&mut enc));
                let s = pipeline::run(&exports, opts, &mut [&mut w], &mut progress)?;
                (s, w.stats())
            };
            enc.finish()
                .and_then(|mut file| file.flush())
                .map_err(|e| Error::write(out.display(), e))?;
            done
        } else {
            let mut w = ChromeWriter::new(Box::new(file));
            let s = pipeline::run(&exports, opts, &mut [&mut w], &mut progress)?;
            (s, w.stats())
        };
        outputs.commit()?;
        report(&summary, out, started, quiet, show);
        if !quiet {
            let cats: Vec<String> = (stats.complete.iter())
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            eprintln!(
                "prvsight: JSON events: {}; {} arrows, {} marks, {} metric samples",
                cats.join(", "),
                stats.flows,
                stats.instants,
                stats.counters
            );
        }
        Ok(())
    }

    /// The progress callback of a conversion: a bar on the terminal where `show`.
    fn progress_bar(show: bool) -> impl FnMut(&Progress) -> bool {
        let mut last_draw = Instant::now();
        move |p: &Progress| {
            if show && (last_draw.elapsed().as_millis() > 200 || p.phase != "converting") {
                last_draw = Instant::now();
                draw_progress(p);
            }
            true
        }
    }

    /// What a finished conversion tells on stderr: warnings, then (unless `quiet`) a summary.
    fn report(summary: &pipeline::Summary, path: &Path, started: Instant, quiet: bool, show: bool) {
        if show {
            eprint!("\r\x1b[2K");
        }
        for w in &summary.warnings {
            eprintln!("prvsight: warning: {w}");
        }
        if quiet {
            return;
        }
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "prvsight: wrote {} ({} records, {} threads in {} processes, {:.3} s of trace) in {:.2} s",
            path.display(),
            summary.records,
            summary.trace.objects.threads.len(),
            summary.trace.objects.processes.len(),
            summary.trace.end_time as f64 / 1e9,
            secs
        );
        let parts: Vec<String> = summary
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        eprintln!("prvsight: records: {}", parts.join(", "));
        if !summary.sorted_by_sql.is_empty() {
            // Not an error: the output is the same, only slower and (in the browser) larger.
            eprintln!(
                "prvsight: sorted by SQLite (rows not in the order nsys writes them, or MPI wait calls too many beside the other calls): {}",
                summary.sorted_by_sql.join("; ")
            );
        }
    }

    fn draw_progress(p: &Progress) {
        let frac = if p.records_estimate > 0 {
            (p.records_done as f64 / p.records_estimate as f64).min(1.0)
        } else {
            0.0
        };
        let width = 30;
        let filled = (frac * width as f64) as usize;
        eprint!(
            "\r\x1b[2K[{}{}] {:>3.0}% {} {} records",
            "#".repeat(filled),
            " ".repeat(width - filled),
            frac * 100.0,
            p.phase,
            p.records_done
        );
        let _ = std::io::stderr().flush();
    }

    fn info(inputs: &[PathBuf], align: &str) -> Result<()> {
        let exports = open_all(inputs)?;
        let opts = Options {
            align: align.parse().map_err(Error::Usage)?,
            ..Options::default()
        };
        let plan = pipeline::plan(&exports, &opts);
        for (i, ex) in exports.iter().enumerate() {
            let s = &ex.schema;
            println!("{}", ex.label);
            println!(
                "  nsys version:   {}",
                s.product_version
                    .as_deref()
                    .unwrap_or("unknown (no export metadata)")
            );
            println!(
                "  schema version: {}{}",
                s.schema_version.as_deref().unwrap_or("unknown"),
                s.metadata_table
                    .as_deref()
                    .map(|t| format!(" (from {t})"))
                    .unwrap_or_else(|| " (no metadata table: nsys ≤ 2022)".into())
            );
            if let Ok(plan) = &plan {
                let src = &plan.trace.sources[i];
                println!("  host:           {}", src.hostname);
                if let Some(t) = src.session_start_utc_ns {
                    println!("  session start:  {t} ns since the Unix epoch (UTC); offset in merged trace: {} ns", src.offset_ns);
                }
                let d = &plan.discoveries[i];
                let fams: Vec<String> = d.families.iter().map(|f| f.to_string()).collect();
                println!(
                    "  record families: {}",
                    if fams.is_empty() {
                        "none".into()
                    } else {
                        fams.join(", ")
                    }
                );
            }
            let ranges = prvsight::nsys::nvtx::range_names(ex, 12)?;
            if !ranges.is_empty() {
                let list: Vec<String> = ranges.iter().map(|(n, c)| format!("{n} ({c})")).collect();
                println!("  NVTX ranges (most frequent): {}", list.join(", "));
            }
            println!("  tables (rows):");
            for (t, n) in ex.table_row_counts()? {
                println!("    {t:<45} {n}");
            }
        }
        match plan {
            Ok(plan) => {
                let o = &plan.trace.objects;
                println!(
                    "trace: {} node(s), {} process(es), {} thread(s), {} GPU(s), {:.6} s",
                    o.hosts.len(),
                    o.processes.len(),
                    o.threads.len(),
                    o.devices.len(),
                    plan.trace.end_time as f64 / 1e9
                );
                for (i, _) in o.threads.iter().enumerate() {
                    println!("  {}", o.thread_label(prvsight::model::ThreadId(i as u32)));
                }
                let domains: Vec<&str> = plan
                    .trace
                    .domains
                    .iter()
                    .map(|d| {
                        if d.is_empty() {
                            "(default)"
                        } else {
                            d.as_str()
                        }
                    })
                    .collect();
                println!("  NVTX domains: {}", domains.join(", "));
            }
            Err(e) => println!("trace: nothing to convert: {e}"),
        }
        Ok(())
    }
}
