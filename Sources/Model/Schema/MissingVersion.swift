import StationSupport

/// The words for a data version the master does not have: one sentence for every command
/// (`log`, `check`, `review`, `delta`, `release`).
package enum MissingVersion {
    /// `data version 9 does not exist (expected 1 to 2; `versions` lists them)`.
    ///
    /// - Parameter lowest: the oldest version the command takes: 1 for a version's contents,
    ///   0 for a delta or release (version 0 is a phone's empty database).
    package static func message(requested: Int, newest: Int, lowest: Int = 1) -> String {
        if newest == 0 && lowest > 0 {
            return "data version \(requested) does not exist (the log is empty; import or apply something first)"
        }
        return "data version \(requested) does not exist (expected \(lowest) to \(newest); `\(CommandHint("versions"))` lists them)"
    }
}
