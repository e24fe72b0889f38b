import Foundation

/// Threads of the kit's own, as a task executor: its server and its scenarios run on them
/// (`withTaskExecutorPreference`), so a process whose cooperative threads are all held (a
/// test run's synchronous suites beside an in-process kit) still answers the client's requests
/// on time. On the shared pool such a host answers a download only when a thread comes free,
/// and the client fails the deadline for the kit's slowness, not its own.
///
/// Child tasks inherit the preference; an unstructured task started inside does not. A job
/// enqueued after `finish()` (a late callback of a connection already closed) runs on a thread
/// started for it, never dropped: a dropped job is a task that never resumes.
final class KitThreads: TaskExecutor, @unchecked Sendable {
    // Guarded by `condition`.
    private var queue: [UnownedJob] = []
    private var head = 0
    private var finished = false
    private let condition = NSCondition()

    /// Starts `count` threads; each waits for jobs until `finish()`.
    init(count: Int) {
        for index in 0..<max(1, count) {
            let thread = Thread { [self] in work() }
            thread.name = "conformance-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if finished {
            condition.unlock()
            Thread { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }.start()
            return
        }
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the threads end once the jobs queued are done.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while let job = next() {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    private func next() -> UnownedJob? {
        condition.lock()
        defer { condition.unlock() }
        while head == queue.count && !finished { condition.wait() }
        guard head < queue.count else { return nil }
        let job = queue[head]
        head += 1
        // The taken jobs are dropped at once in a while, not one by one (`removeFirst` is O(n)).
        if head >= 1024 && head * 2 >= queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return job
    }
}
