//! slurm-decode: our dissector. Reads a pcap (or a raw byte stream of
//! length-prefixed frames), reassembles TCP, and prints one line per Slurm
//! message. Exits non-zero when any Slurm-framed message fails to decode.

use clap::Parser;
use slurm_decode::{
    decode_frame_strict, decode_streams_in, read_streams, rpc_label, split_frames, Decoded,
};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "slurm-decode",
    about = "Decode Slurm RPC traffic (protocol 22.05 to 26.05) from pcap or raw captures",
    after_help = "Examples:\n  slurm-decode fixtures/24.11/srun.pcap\n  slurm-decode --release 24.11 fixtures/24.11/sacct.pcap\n  slurm-decode -v --only REQUEST_LAUNCH_TASKS capture.pcap\n  slurm-decode --raw frames.bin"
)]
struct Args {
    /// Print the decoded fields of each message.
    #[arg(short, long)]
    verbose: bool,
    /// Treat inputs as raw concatenated frames instead of pcap.
    #[arg(long)]
    raw: bool,
    /// Show only these message types (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Also list streams that are not Slurm RPC framing (srun I/O, HTTP).
    #[arg(long)]
    show_raw: bool,
    /// The release the captured daemons run (22.05, 24.11, ...): reads slurmdbd
    /// connections to port 6819 opened before the capture began.
    #[arg(long, value_parser = parse_release)]
    release: Option<slurm_wire::ProtocolVersion>,
    /// Also write every Slurm frame (without its length prefix) into this
    /// directory, one file each: seeds for the `fuzz_frame` target.
    #[arg(long, value_name = "DIR")]
    frames_to: Option<PathBuf>,
    /// Capture files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

struct Line<'a> {
    where_: String,
    raw: &'a [u8],
    version: Option<slurm_wire::ProtocolVersion>,
    name: &'a str,
    /// On a slurmdbd connection.
    dbd: bool,
    /// A DBD message whose type has no codec yet (not a failure).
    awaits_codec: bool,
    outcome: &'a Result<Decoded, slurm_wire::DecodeError>,
}

/// Prints one message; false when it failed to decode.
fn print_line(out: &mut impl Write, l: &Line<'_>, args: &Args) -> std::io::Result<bool> {
    if let (Some(dir), false) = (&args.frames_to, l.dbd) {
        // fuzz_frame's seeds are RPC frames
        let name = format!("{:016x}", fnv1a(l.raw));
        std::fs::write(dir.join(name), l.raw.get(4..).unwrap_or_default())?;
    }
    let name = l.name;
    if !args.only.is_empty() && !args.only.iter().any(|o| o.eq_ignore_ascii_case(name)) {
        return Ok(true);
    }
    let ver = l.version.map_or("?".into(), |v| v.to_string());
    // a DBD message's body follows its u32 length and u16 type
    let dbd_body = l.raw.len().saturating_sub(6).to_string();
    let (body_len, status, ok) = match l.outcome {
        Ok(Decoded::Rpc { frame, .. }) => (frame.body.len().to_string(), "ok".to_string(), true),
        Ok(Decoded::Dbd(_) | Decoded::PersistRpc(_)) => (dbd_body, "ok".to_string(), true),
        Ok(Decoded::PersistInit { frame, .. }) => {
            (frame.body.len().to_string(), "ok".to_string(), true)
        }
        Err(_) if l.awaits_codec => (dbd_body, "no codec yet".to_string(), true),
        Err(e) => {
            let declared = l.raw.get(10..14).map_or("?".to_string(), |b| {
                u32::from_be_bytes([b[0], b[1], b[2], b[3]]).to_string()
            });
            (
                if l.dbd { dbd_body } else { declared },
                format!("ERROR {e}"),
                false,
            )
        }
    };
    writeln!(out, "{} {ver} {name} body={body_len} {status}", l.where_)?;
    if args.verbose {
        match l.outcome {
            Ok(Decoded::Rpc { frame, msg }) => {
                let auth = match &frame.auth {
                    None => "none".to_string(),
                    Some(a) => format!(
                        "plugin {} ({} chars)",
                        a.plugin_id,
                        a.credential.as_deref().map_or(0, str::len)
                    ),
                };
                writeln!(
                    out,
                    "    header: flags={:#06x} forward.cnt={} ret_cnt={} orig_addr={:?} auth={auth}",
                    frame.header.flags,
                    frame.header.forward.cnt,
                    frame.header.ret_list.len(),
                    frame.header.orig_addr
                )?;
                indented(out, msg)?;
            }
            Ok(Decoded::Dbd(msg)) => indented(out, msg)?,
            Ok(Decoded::PersistRpc(msg)) => indented(out, msg)?,
            Ok(Decoded::PersistInit { req, .. }) => indented(out, req)?,
            Err(_) => {}
        }
    }
    Ok(ok)
}

/// A decoded value's fields, one level in.
fn indented(out: &mut impl Write, x: &impl std::fmt::Debug) -> std::io::Result<()> {
    for line in format!("{x:#?}").lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(())
}

fn parse_release(s: &str) -> Result<slurm_wire::ProtocolVersion, String> {
    slurm_wire::ProtocolVersion::from_release(s).ok_or_else(|| format!("unknown release {s}"))
}

fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3)
    })
}

fn run(args: &Args) -> std::io::Result<(usize, usize)> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut total, mut failed, mut awaiting) = (0, 0, 0);
    for file in &args.files {
        let bytes = std::fs::read(file)?;
        writeln!(out, "# {}", file.display())?;
        let is_pcap = matches!(
            bytes.get(..4),
            Some(
                [0xd4, 0xc3, 0xb2, 0xa1]
                    | [0xa1, 0xb2, 0xc3, 0xd4]
                    | [0x4d, 0x3c, 0xb2, 0xa1]
                    | [0xa1, 0xb2, 0x3c, 0x4d]
            )
        );
        if args.raw || !is_pcap {
            let Some(frames) = split_frames(&bytes) else {
                writeln!(out, "not Slurm RPC framing ({} bytes)", bytes.len())?;
                failed += 1;
                continue;
            };
            for (off, raw) in frames {
                let outcome = decode_frame_strict(raw);
                let (version, name) = rpc_label(raw);
                let l = Line {
                    where_: format!("@{off}"),
                    raw,
                    version,
                    name: &name,
                    dbd: false,
                    awaits_codec: false,
                    outcome: &outcome,
                };
                total += 1;
                if !print_line(&mut out, &l, args)? {
                    failed += 1;
                }
            }
            continue;
        }
        let streams = match read_streams(&bytes) {
            Ok(s) => s,
            Err(e) => {
                writeln!(out, "ERROR {e}")?;
                failed += 1;
                continue;
            }
        };
        let (msgs, raws) = decode_streams_in(&streams, args.release);
        for m in &msgs {
            let l = Line {
                where_: format!("stream {} {} {} -> {}", m.stream, m.dir, m.src, m.dst),
                raw: m.raw,
                version: m.version,
                name: &m.name,
                dbd: m.dbd,
                awaits_codec: m.awaits_codec(),
                outcome: &m.outcome,
            };
            total += 1;
            awaiting += usize::from(l.awaits_codec);
            if !print_line(&mut out, &l, args)? {
                failed += 1;
            }
        }
        if args.show_raw {
            for r in raws {
                writeln!(
                    out,
                    "stream {} {} raw {} bytes (not Slurm RPC or DBD framing)",
                    r.stream, r.dir, r.len
                )?;
            }
        }
    }
    write!(out, "# {total} messages, {failed} failed")?;
    if awaiting > 0 {
        write!(out, ", {awaiting} DBD messages without a codec yet")?;
    }
    writeln!(out)?;
    Ok((total, failed))
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok((_, 0)) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("slurm-decode: {e}");
            ExitCode::from(2)
        }
    }
}
