/// Where long work reports how far it is: the command line draws it on a terminal; nothing
/// listens by default. The caller hands the observer in with `Progress.$observer.withValue`.
public struct ProgressObserver: Sendable {
    /// A new phase: its name, and how many units it has when known.
    public var begin: @Sendable (_ phase: String, _ total: Int?) -> Void
    /// Units done so far in the current phase.
    public var update: @Sendable (_ completed: Int) -> Void
    /// The work is done: whatever shows progress should go before the results are printed.
    public var finish: @Sendable () -> Void

    /// An observer from its three callbacks.
    public init(begin: @escaping @Sendable (String, Int?) -> Void, update: @escaping @Sendable (Int) -> Void,
                finish: @escaping @Sendable () -> Void) {
        self.begin = begin
        self.update = update
        self.finish = finish
    }
}

/// The progress of the work running in this task, told to `observer`.
public enum Progress {
    /// Who is told; nil: nobody.
    @TaskLocal public static var observer: ProgressObserver?

    package static func phase(_ name: String, total: Int? = nil) { observer?.begin(name, total) }
    package static func update(_ completed: Int) { observer?.update(completed) }
    package static func finish() { observer?.finish() }
}
