//! The `sms-sdk` command.

fn main() -> std::process::ExitCode {
    let env = sms_sdk_cli::Env::from_process();
    let code = sms_sdk_cli::run(std::env::args_os().skip(1), &env, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::ExitCode::from(code)
}
