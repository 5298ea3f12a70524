//! `sms-bench-responder`: a static HTTP/1.1 responder for the load benchmarks. It answers every
//! request, whatever its path, with the same precomputed Twilio `201 Created` (`wire::
//! response_bytes`), on one tokio thread, with keep-alive; `--delay-ms` holds each answer back
//! (the 10,000-in-flight memory run uses 1,000 ms).
//!
//! It parses only what it must (the request head, to find `Content-Length`) and writes one
//! static buffer, so it costs far less per request than any client; `sms-bench-load` reads its
//! CPU time from `/proc/<pid>/stat` and reports it per request. Run it pinned to the core the
//! client does not use (`taskset -c 1`).

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Answers every HTTP/1.1 request with the same Twilio 201.
#[derive(Debug, Parser)]
struct Args {
    /// Where to listen.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// How long to hold each answer back, in milliseconds.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// A file to write the bound address to once listening.
    #[arg(long)]
    ready_file: Option<PathBuf>,
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(serve(args))
}

async fn serve(args: Args) -> io::Result<()> {
    let socket = if args.listen.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.bind(args.listen)?;
    // The memory run opens 10,000 connections at once: a deep accept queue.
    let listener = socket.listen(16_384)?;
    let address = listener.local_addr()?;
    if let Some(path) = &args.ready_file {
        std::fs::write(path, address.to_string())?;
    }
    println!("sms-bench-responder listening on {address} (delay {} ms)", args.delay_ms);
    let response: &'static [u8] = Box::leak(sms_bench::wire::response_bytes().into_boxed_slice());
    let delay = Duration::from_millis(args.delay_ms);
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let _ = connection(stream, response, delay).await;
        });
    }
}

/// The length of the first request in `bytes` when all of it (head and body) is there;
/// `Err` for a request this responder does not read (malformed, chunked).
fn complete_request(bytes: &[u8]) -> Result<Option<usize>, ()> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut request = httparse::Request::new(&mut headers);
    let head = match request.parse(bytes) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(()),
    };
    let mut length = 0usize;
    for header in request.headers.iter() {
        if header.name.eq_ignore_ascii_case("content-length") {
            length = std::str::from_utf8(header.value).ok().and_then(|v| v.trim().parse().ok()).ok_or(())?;
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(());
        }
    }
    let total = head.checked_add(length).ok_or(())?;
    Ok((bytes.len() >= total).then_some(total))
}

/// Serves one keep-alive connection until the client closes it.
async fn connection(mut stream: TcpStream, response: &'static [u8], delay: Duration) -> io::Result<()> {
    let mut buffer: Vec<u8> = Vec::with_capacity(8 * 1024);
    loop {
        // Answer every complete request already read (pipelined ones in order).
        let mut consumed = 0;
        let mut answers = 0usize;
        while let Some(rest) = buffer.get(consumed..) {
            match complete_request(rest) {
                Ok(Some(length)) => {
                    consumed += length;
                    answers += 1;
                }
                Ok(None) => break,
                Err(()) => return Ok(()),
            }
        }
        if answers > 0 {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            for _ in 0..answers {
                stream.write_all(response).await?;
            }
            buffer.drain(..consumed);
        }
        if stream.read_buf(&mut buffer).await? == 0 {
            return Ok(());
        }
    }
}
