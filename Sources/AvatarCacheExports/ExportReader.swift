import AvatarCacheModel
import AvatarCacheSupport
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
    /// Whether the number is stated for several inputs together (Monica's pages, saved one
    /// a file and given as a glob: each page states the whole `meta.total`): the run adds
    /// up what each read against the one number, and says what is lost once, at the end.
    public var shared = false
    /// The pages read (`meta.current_page`) and the last one stated (`meta.last_page`).
    public var pages: [Int] = []
    public var lastPage: Int?
    /// The inputs counted together (shared counts).
    public var inputs = 1

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

    /// Whether `other` is counted against the same stated number (and adds to this one).
    public func counts(with other: InputCount) -> Bool {
        shared && other.shared && statedBy == other.statedBy && unit == other.unit && stated == other.stated
    }

    public mutating func add(_ other: InputCount) {
        read += other.read
        pages = Array(Set(pages + other.pages)).sorted()
        lastPage = [lastPage, other.lastPage].compactMap { $0 }.max()
        inputs += other.inputs
    }

    /// Pages up to the last stated that no input held.
    /// (At most the first 1,000, up to a last page no larger than one page a record.)
    public var missingPages: [Int] {
        guard let lastPage, lastPage >= 1 else { return [] }
        let seen = Set(pages)
        var missing: [Int] = []
        for page in 1...min(lastPage, max(stated, pages.max() ?? 1, 1)) where !seen.contains(page) {
            missing.append(page)
            if missing.count == 1000 { break }
        }
        return missing
    }

    /// Why the records are lost, for a bad record: "meta.total states 14 contacts; 8 were
    /// read from 1 input (page 1; page 2 of 2 missing): 6 lost".
    public var lossReason: String {
        var text = "\(statedBy) states \(stated) \(unit); \(read) were read"
        if shared { text += " from \(inputs) input\(inputs == 1 ? "" : "s")" }
        let missing = missingPages
        if !missing.isEmpty {
            text += " (page\(missing.count == 1 ? "" : "s") \(missing.prefix(10).map(String.init).joined(separator: ", "))\(missing.count > 10 ? ", …" : "") of \(lastPage ?? 0) missing)"
        }
        return text + ": \(lost) lost"
    }
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
