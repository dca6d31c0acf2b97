import Foundation

/// What detection looks at in one input: its path, whether it is a folder, and a file's
/// first 64 KiB as text, read once, when a format first asks for it (a `.vcf` name or a
/// Firestore export is told without opening the file).
public final class ExportSample {
    public let path: String
    public let isFolder: Bool
    private var text: String?

    /// Bytes of a file's start that detection reads.
    public static let headBytes = 64 * 1024

    /// Throws when nothing is at `path`.
    init(path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ExportError(file: path, reason: "no such file or folder")
        }
        self.path = path
        isFolder = isDirectory.boolValue
    }

    /// Whether the path's name ends with one of `extensions`, in any case.
    public func hasExtension(_ extensions: [String]) -> Bool {
        extensions.contains(where: path.lowercased().hasSuffix)
    }

    /// A file's first 64 KiB as text (a vCard in UTF-16 decoded: it is told by its text,
    /// not its zero bytes); a folder has none (""). Throws when the file cannot be opened.
    public func head() throws -> String {
        if let text { return text }
        guard !isFolder else { return "" }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ExportError(file: path, reason: "cannot open")
        }
        defer { try? handle.close() }
        let read = String(decoding: try VCardBytes(bytes: [UInt8](handle.readData(ofLength: Self.headBytes))).next(), as: UTF8.self)
        text = read
        return read
    }

    /// The head without the blanks and byte-order mark it starts with.
    public func start() throws -> Substring {
        try head().drop { $0.isWhitespace || $0 == "\u{FEFF}" }
    }

    /// Whether the head holds `"key"` (quoted, as a JSON key or string is).
    public func hasKey(_ key: String) throws -> Bool {
        try head().contains("\"\(key)\"")
    }

    /// A folder's files that `kind` reads from a folder, in name order (none for a file).
    public func files(of kind: any ExportFormatReader.Type) throws -> [String] {
        guard isFolder, let files = kind.folderFiles else { return [] }
        return try ExportFormat.folderFiles(path, endingWith: files.extensions)
    }

    /// Whether this folder is of `kind`: it holds the files `kind` reads from a folder and
    /// the first of them (name order) is `kind`'s.
    public func isFolder(of kind: any ExportFormatReader.Type) throws -> Bool {
        guard let first = try files(of: kind).first else { return false }
        return try ExportFormat.detect(path: first) == kind.format
    }

    /// What the input starts with, for an error: its first 80 characters if they are
    /// text, else that it is not (a binary file's bytes are not echoed).
    func shownStart() throws -> String {
        let start = try start().prefix(80)
        let printable = start.unicodeScalars.allSatisfy { $0 == "\n" || $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F && $0 != "\u{FFFD}") }
        return printable ? "it starts with \"\(start.replacingOccurrences(of: "\n", with: "\\n"))\"" : "it is not text (a binary file?)"
    }
}
