//! The HTTP listener's event loops: one single-threaded runtime per core, each on a thread of its own, and an
//! accepted connection lives on one of them (round robin) for its whole life.
//!
//! Why not the server's multi-threaded runtime: its workers wake one another to steal each new task, and for
//! short requests those wake-ups were a sixth of the server's CPU (IS1 point reads over HTTP at 10,000/s, 32
//! connections: 400-403 ticks of server CPU with two workers, 323-336 with one). With a loop per core a request
//! is read, run (queries within the inline budget, `quick.rs`) and answered on one thread, and every core is
//! still used: 310-348 ticks at that load, and at 20,000/s p99 7.4 ms where two workers took 44.8 ms. Work that
//! blocks goes to the loop's own blocking threads, as before.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// Running event loops.
pub struct EventLoops {
    handles: Vec<Handle>,
    next: AtomicUsize,
    stops: std::sync::Mutex<Vec<oneshot::Sender<()>>>,
    threads: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>>,
}

impl EventLoops {
    /// Starts `count` loops (at least one). Each may run up to `blocking_threads` blocking tasks at once, on
    /// threads with `stack_bytes` of stack (queries recurse).
    pub fn start(count: usize, blocking_threads: usize, stack_bytes: usize) -> std::io::Result<EventLoops> {
        let mut handles = Vec::new();
        let mut stops = Vec::new();
        let mut threads = Vec::new();
        for k in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .max_blocking_threads(blocking_threads.max(1))
                .thread_stack_size(stack_bytes)
                .thread_name(format!("http-query-{k}"))
                .build()?;
            handles.push(runtime.handle().clone());
            let (stop, stopped) = oneshot::channel::<()>();
            stops.push(stop);
            threads.push(std::thread::Builder::new().name(format!("http-{k}")).stack_size(stack_bytes).spawn(
                move || {
                    runtime.block_on(async {
                        let _ = stopped.await;
                    });
                    // Connections are closed by then (the listener waits for them); a blocking task still running
                    // (a query the grace period cancelled) finishes on its own thread.
                    runtime.shutdown_timeout(Duration::from_secs(1));
                },
            )?);
        }
        Ok(EventLoops {
            handles,
            next: AtomicUsize::new(0),
            stops: std::sync::Mutex::new(stops),
            threads: std::sync::Mutex::new(threads),
        })
    }

    /// The loop the next connection goes to.
    pub fn next(&self) -> &Handle {
        let k = self.next.fetch_add(1, Ordering::Relaxed) % self.handles.len();
        &self.handles[k]
    }

    /// Stops every loop and waits for their threads.
    pub fn stop(&self) {
        self.signal_stop();
        for thread in self.threads.lock().expect("not poisoned").drain(..) {
            let _ = thread.join();
        }
    }

    /// Tells every loop still running to stop, without waiting.
    fn signal_stop(&self) {
        for stop in self.stops.lock().expect("not poisoned").drain(..) {
            let _ = stop.send(());
        }
    }
}

impl Drop for EventLoops {
    fn drop(&mut self) {
        self.signal_stop();
    }
}
