//! `plexus user`: manage the server's users (stored argon2-hashed in DATA/users.json). A running server picks
//! changes up at the next log-on.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use plexus_server::auth::{Auth, AuthError, Role};

use crate::{usage, Failure};

#[derive(Args, Debug)]
pub struct UserArgs {
    /// Data directory of the server.
    #[arg(long, default_value = "plexus-data", global = true)]
    data: PathBuf,
    #[command(subcommand)]
    action: UserAction,
}

#[derive(Subcommand, Debug)]
enum UserAction {
    /// List users and their roles.
    List,
    /// Add a user: role reader, writer or admin. The password comes from --password or PLEXUS_USER_PASSWORD.
    Add {
        name: String,
        #[arg(long, default_value = "reader")]
        role: String,
        #[arg(long, env = "PLEXUS_USER_PASSWORD", hide_env_values = true)]
        password: String,
    },
    /// Change a user's password.
    Passwd {
        name: String,
        #[arg(long, env = "PLEXUS_USER_PASSWORD", hide_env_values = true)]
        password: String,
    },
    /// Remove a user.
    Remove { name: String },
}

pub fn run(args: UserArgs) -> Result<(), Failure> {
    if !args.data.join("users.json").exists() {
        return Err(format!(
            "{} has no users yet: start `plexus serve --data {}` once to create the initial user",
            args.data.display(),
            args.data.display()
        )
        .into());
    }
    let (auth, generated) = Auth::open(&args.data, None).map_err(|e| e.to_string())?;
    // A users file left without users gets the initial admin back, whose password must then be shown once.
    if let Some(password) = generated {
        println!("the users file held no user: created the admin 'neo4j' with password {password}");
    }
    match args.action {
        UserAction::List => {
            for (name, role) in auth.users() {
                println!("{name}\t{}", role.name());
            }
        }
        UserAction::Add { name, role, password } => {
            let role = Role::parse(&role)
                .ok_or_else(|| usage(format!("unknown role '{role}': use reader, writer or admin")))?;
            auth.add_user(&name, &password, role).map_err(failure)?;
            println!("added user '{name}' ({})", role.name());
        }
        UserAction::Passwd { name, password } => {
            auth.set_password(&name, &password).map_err(failure)?;
            println!("changed the password of '{name}'");
        }
        UserAction::Remove { name } => {
            auth.remove_user(&name).map_err(failure)?;
            println!("removed user '{name}'");
        }
    }
    Ok(())
}

/// A name or password that can never be accepted is the command line's fault (status 2); the rest, such as a
/// user that exists already or does not, is found in the users as they are (status 1).
fn failure(e: AuthError) -> Failure {
    match e {
        AuthError::EmptyPassword | AuthError::InvalidName(_) => usage(e.to_string()),
        e => Failure::from(e.to_string()),
    }
}
