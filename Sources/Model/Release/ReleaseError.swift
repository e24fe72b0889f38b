import Foundation
import GRDB
import StationCheck
import StationFiles
import StationManifest
import StationReleaseFolder
import StationSignatures
import StationSchema
import StationSupport

/// What `release`, `verify` and the carry-over script refuse, naming the folder or version.
public enum ReleaseError: Error, LocalizedError, Equatable {
    case missingFolder(String)
    case missingManifest(String)
    /// The manifest cannot be read, or its folder disagrees with it (`ManifestAudit`).
    case manifest(ManifestError)
    case verificationFailed([String])
    case noFolderGiven
    case notAFolder(String)
    case cannotWrite(String, reason: String)
    case diskFull(String)
    /// The holder's pid, nil when it is not known (a reader, or a process that is gone).
    case folderBusy(String, holder: Int32?)
    case otherLineage(String, folder: String, master: String)
    case notOurs(String)
    case interruptedRelease(String)
    case checksFailed(version: Int, [CheckFinding])
    case nothingImported
    /// A master the stamp did not give a lineage to (a release folder belongs to one lineage).
    case masterWithoutLineage(String)
    /// The folder's manifest is signed, and this release was not asked to sign.
    case signingRequired(String)
    /// The folder holds versions newer than the master's newest: a master restored from a backup.
    case folderAhead(String, folderNewest: Int, masterNewest: Int)
    /// The folder's version differs from the master's version of the same number.
    case publishedVersionDiffers(String, version: Int, folderHash: String, masterHash: String)
    /// The folder lists other files than the master published (`PublishedHistory`): nothing is signed.
    case notWhatTheMasterPublished(String, [ManifestProblem])
    /// The folder's current manifest is not signed by a key `resign` trusts: nothing is signed.
    case currentSignatureRefused(String, reason: String)
    /// A file or folder the release would lock or write is a link, another user's, or writable by others.
    case unsafePath(String, reason: String)

    public var errorDescription: String? {
        switch self {
        case let .notWhatTheMasterPublished(path, problems):
            return "\(path): the folder is not what this master published; nothing was signed or written. It was changed since it was released "
                + "(restore it from a backup of the folder, or release into a new folder with --out):\n" + problems.map { "  \($0)" }.joined(separator: "\n")
        case let .currentSignatureRefused(path, reason):
            return "\(path): the folder's current manifest is not one a trusted key signed (\(reason)); nothing was signed. "
                + "Re-signing would sign whatever was written there: restore the folder from a backup, or give the key that signed it with --trust FILE.pub"
        case let .unsafePath(path, reason):
            return "\(path): \(reason); nothing was written (a release locks and writes only files of its own user's that no one else can write: "
                + "remove it if you did not make it, or release into a folder only you can write)"
        case let .signingRequired(path):
            return "\(path): this folder's manifest is signed, and phones that pin its keys would refuse an unsigned one; sign this release too (--sign KEY, or $STATION_ADMIN_SIGNING_KEY), or remove \(path) to stop signing"
        case let .masterWithoutLineage(path):
            return "\(path): the master has no lineage, so no release folder can be tied to it (open it once with this StationAdmin to stamp it, then release again)"
        case let .folderAhead(path, folderNewest, masterNewest):
            return "\(path): the folder has published versions up to \(folderNewest), and this master only reaches \(masterNewest) "
                + "(a restored backup?); phones may already have \(masterNewest + 1)…\(folderNewest), and a published version never changes. "
                + "Nothing was written: release into a new folder (--out), or bring back the master the folder came from"
        case let .publishedVersionDiffers(path, version, folderHash, masterHash):
            return "\(path): version \(version) is published with content hash \(folderHash), and this master's version \(version) is \(masterHash): "
                + "the master diverged from what phones have (a restored backup edited since?). Nothing was written: release into a new folder (--out), "
                + "or bring back the master the folder came from"
        case .nothingImported:
            return "the master is at data version 0: nothing has been imported yet, so there is nothing to release (import a folder of ekidata CSV files first: `\(CommandHint("import", "FOLDER"))`)"
        case let .missingFolder(path):
            return "\(path): no release folder here (build one with `\(CommandHint("release", "--out", path))`)"
        case let .manifest(error):
            return error.errorDescription
        case let .missingManifest(path):
            return "\(path): no manifest.json: not a release folder, or an interrupted one (build it again with `\(CommandHint("release"))`)"
        case let .verificationFailed(failures):
            return "verification failed:\n" + failures.map { "  " + $0 }.joined(separator: "\n")
        case .noFolderGiven:
            return "--out is empty (expected the path of a release folder, e.g. --out release)"
        case let .notAFolder(path):
            return "\(path): a file, not a release folder (expected a folder, or a path that does not exist yet; choose another --out)"
        case let .cannotWrite(path, reason):
            return "\(path): cannot write the release folder (\(reason)); check its permissions or choose another --out"
        case let .diskFull(path):
            return "\(path): the disk is full (the release folder is as it was; free some space and release again)"
        case let .folderBusy(path, holder):
            return "\(path): \(ReleaseFolderLock.describe(holder)) is \(holder == nil ? "using" : "writing") this release folder; try again when it has finished"
        case let .otherLineage(path, folder, master):
            return "\(path): holds the releases of another master database (lineage \(folder); this one is \(master)); choose another --out, or the --db that made them"
        case let .notOurs(path):
            return "\(path): exists, but no manifest lists it: not a release of ours (move it away, or choose another --out)"
        case let .interruptedRelease(path):
            return "\(path): a release into this folder was interrupted; complete it with `\(CommandHint("release", "--out", path))`"
        case let .checksFailed(version, findings):
            return "version \(version) has \(findings.count) error-level finding\(findings.count == 1 ? "" : "s") that no waiver accepts; nothing was released:\n"
                + findings.map { "  " + $0.line.escapingControlCharacters }.joined(separator: "\n")
                + "\n(fix them, accept the right ones with `\(CommandHint("waive", "RULE", "TABLE", "KEY", "--reason", "…"))`, or release anyway with --skip-checks)"
        }
    }

    /// Runs `body`, turning file-system errors about the folder into errors that name it.
    package static func translating<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ReleaseError {
            throw error
        } catch let error as OwnFiles.Refusal {
            throw ReleaseError.unsafePath(error.path, reason: error.reason)
        } catch let error as ManifestError {
            throw ReleaseError.manifest(error)
        } catch let error as MasterDatabaseError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
            throw ReleaseError.diskFull(path)
        } catch where FileChecks.isDiskFull(error) {
            throw ReleaseError.diskFull(path)
        } catch let error as FileError {
            throw ReleaseError.cannotWrite(path, reason: error.message)
        } catch let error as CocoaError {
            throw ReleaseError.cannotWrite(path, reason: FileError.words(for: error))
        } catch let error as NSError where error.domain == NSPOSIXErrorDomain {
            throw ReleaseError.cannotWrite(path, reason: FileError.words(for: error))
        }
    }
}
