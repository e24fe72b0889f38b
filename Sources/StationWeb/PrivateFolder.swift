import Foundation

/// The sync's scratch folder, private to the user that runs it: made with mode 0700 where
/// missing, and refused where it is not a folder of that user's that no one else can write. The
/// folder holds what the next sync builds on; a folder another local user made or can write is
/// a way to hand the sync files (the kept database is also checked by its recorded hash, so this
/// is the first of two locks).
enum PrivateFolder {
    static func prepare(_ path: String) throws {
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty { try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw PostgresSyncError.unsafeScratch(path: path, reason: "cannot be made (\(String(cString: strerror(errno))))")
        }
        var status = stat()
        guard lstat(path, &status) == 0 else {
            throw PostgresSyncError.unsafeScratch(path: path, reason: "cannot be read (\(String(cString: strerror(errno))))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw PostgresSyncError.unsafeScratch(path: path, reason: "is not a folder (a link or a file)") }
        guard status.st_uid == geteuid() else {
            throw PostgresSyncError.unsafeScratch(path: path, reason: "belongs to another user (uid \(status.st_uid))")
        }
        guard status.st_mode & 0o022 == 0 else {
            throw PostgresSyncError.unsafeScratch(path: path, reason: "can be written by others (mode \(String(status.st_mode & 0o777, radix: 8)))")
        }
    }

    /// A folder of this run's own in `scratch` (`run-PID-…`, mode 0700) for what it downloads and
    /// builds, so that two syncs at once never share a file; those of runs that no longer exist
    /// (killed) are removed first.
    static func run(in scratch: String) throws -> String {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: scratch)) ?? [] where name.hasPrefix("run-") {
            let pid = name.dropFirst(4).prefix { $0.isNumber }
            if let pid = pid_t(pid), kill(pid, 0) != 0 && errno == ESRCH {
                try? manager.removeItem(atPath: (scratch as NSString).appendingPathComponent(name))
            }
        }
        let folder = (scratch as NSString).appendingPathComponent("run-\(getpid())-\(UUID().uuidString.prefix(8))")
        guard mkdir(folder, 0o700) == 0 else {
            throw PostgresSyncError.unsafeScratch(path: folder, reason: "cannot be made (\(String(cString: strerror(errno))))")
        }
        return folder
    }
}
