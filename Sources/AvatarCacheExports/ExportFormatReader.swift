/// A reader that is a format of its own: the name `--format` takes, what it reads in a
/// line, how detection tells its input, and how it is made. `ExportFormat.registered`
/// lists every one, in the order detection asks them; `--help`, the choices of
/// `--format`, the error that lists the formats and docs/inputs.md's detection list come
/// from that list.
///
/// Adding a format: its reader's file (the reader, this conformance and its
/// `ExportFormat` constant), its line in `ExportFormat.registered`, its tests, its row in
/// docs/inputs.md and its name in the README (`ExportFormatHelpTests` fails until they
/// are). `SendableMetatype`: the registry is a shared list of these types.
public protocol ExportFormatReader: ExportReader, SendableMetatype {
    /// The name `--format` and a pipeline file's `format` take.
    static var name: String { get }
    /// What it reads, in a few words: a line of `warm --help`, beside the name, in 80
    /// columns (docs/inputs.md has the details).
    static var summary: String { get }
    /// What detection looks for, in a few words (the error that lists the formats, and
    /// docs/inputs.md).
    static var evidence: String { get }
    /// The files a folder of this format holds (Jami's vCards, Monica's pages): such a
    /// folder is this format when the first of them is. Nil: not a folder of files.
    static var folderFiles: FolderFiles? { get }
    /// Whether `sample` is this format. Asked in registration order, after the formats
    /// before it said no, so it need not rule them out again. Throws when the input cannot
    /// be read at all.
    static func recognises(_ sample: ExportSample) throws -> Bool
    /// The reader of `path`; a reader that takes no field map ignores `map`.
    static func reader(path: String, limits: ReaderLimits, map: FieldMap) -> any ExportReader
}

extension ExportFormatReader {
    /// The format this reader declares (its `ExportFormat` constant is this).
    public static var format: ExportFormat { ExportFormat(self) }

    public static var folderFiles: FolderFiles? { nil }
}

/// The files a folder of one format holds, and what they are called in messages.
public struct FolderFiles: Sendable {
    /// Name endings, any case (".vcf"); the first is the one a message's glob shows.
    public var extensions: [String]
    /// "Jami vCards"
    public var name: String

    public init(extensions: [String], name: String) {
        self.extensions = extensions
        self.name = name
    }
}
