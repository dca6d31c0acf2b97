import AvatarCacheLookup
import Foundation

/// A record that could not be used (or only in part), and why; the run reports it and
/// goes on.
public struct BadRecord: Error, Sendable, Codable, Equatable, CustomStringConvertible {
    public var file: String
    public var index: Int
    public var line: Int
    public var reason: String

    public init(file: String, index: Int, line: Int, reason: String) {
        self.file = file
        self.index = index
        self.line = line
        self.reason = abbreviated(reason, limit: ShownText.maxReasonCharacters)
    }

    public var description: String {
        index == 0 ? "\(file): \(reason)" : "\(file): record \(index)\(line > 0 ? " (line \(line))" : ""): \(reason)"
    }
}

/// What a reader yields, record by record.
public enum ExportItem: Sendable {
    case profile(Profile)
    case bad(BadRecord)
    /// What the reader chose or found, for the log (info) and the report: which
    /// collection and fields were read, and how many people had each.
    case note(String)
    /// How many records an input states it holds, and how many were read: a Firestore
    /// export's overall metadata, Monica's `meta.total`, a vCard file's `BEGIN:VCARD` lines.
    case count(InputCount)
}

/// What an input states it holds against what was read of it. Fewer read than stated is
/// never silent: each lost file or record is a bad record too, and the run fails
/// (exit 5) unless `--max-failure-rate` allows the loss.
public struct InputCount: Sendable, Codable, Equatable, CustomStringConvertible {
    /// The input (its path) and who states the number (a metadata file, a field).
    public var source: String
    public var statedBy: String
    /// What is counted: "documents", "contacts", "cards".
    public var unit: String
    public var stated: Int
    public var read: Int

    public init(source: String, statedBy: String, unit: String, stated: Int, read: Int) {
        self.source = source
        self.statedBy = statedBy
        self.unit = unit
        self.stated = stated
        self.read = read
    }

    /// Records stated and not read.
    public var lost: Int { max(0, stated - read) }

    public var description: String { "\(unit) read \(read) of \(stated) stated" }
}

/// Why a whole export could not be read (as opposed to one bad record in it).
public struct ExportError: Error, CustomStringConvertible {
    public var file: String
    public var reason: String

    public init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }

    public var description: String { "\(file): \(reason)" }
}

/// Reads one export file (or folder), calling `body` for every record in order.
public protocol ExportReader {
    func read(_ body: (ExportItem) throws -> Void) throws
}

/// Limits readers apply to what an export carries.
public struct ReaderLimits: Sendable {
    /// Largest inline photo (vCard PHOTO, `data:` URL), decoded bytes. Default 20 MB.
    public var maxInlineBytes: Int = 20_000_000
    /// Largest single JSON record or vCard, in bytes (`--max-record-bytes`). Default
    /// 28 MB: room for a 20 MB inline photo in base64, plus 1 MB.
    public var maxRecordBytes: Int = ReaderLimits.defaultMaxRecordBytes
    public static let defaultMaxRecordBytes = 28_000_000
    /// The Firebase Storage bucket a Firestore export's storage paths and `gs://` photos are
    /// downloaded from (`--storage-bucket`); nil: the bucket an emulator export names, if any.
    public var storageBucket: String?

    public init() {}
}
