//! The `sms-sdk` command.

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let env = sms_sdk_cli::Env::from_process();
    let code = sms_sdk_cli::run(&args, &env, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::ExitCode::from(code)
}
