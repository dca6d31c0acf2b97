import AvatarCacheExports
import Foundation

extension WarmConfiguration {
    /// What the readers take from this configuration: the inline photo limit (the
    /// download byte limit), the record limit and the Storage bucket.
    public var readerLimits: ReaderLimits {
        var limits = ReaderLimits()
        limits.maxInlineBytes = fetchLimits.maxBytes
        limits.maxRecordBytes = maxRecordBytes
        limits.storageBucket = storageBucket
        return limits
    }

    /// Each export's format (its input's, the run's, else detected), once every export is
    /// found there and readable.
    public func exportFormatsChecked() throws -> [ExportFormat] {
        try exports.map { path -> ExportFormat in
            guard FileManager.default.fileExists(atPath: path) else { throw ExportError(file: path, reason: "no such file or folder") }
            guard FileManager.default.isReadableFile(atPath: path) else { throw ExportError(file: path, reason: "cannot be read (permissions)") }
            return try exportFormats[path] ?? format ?? ExportFormat.detect(path: path)
        }
    }
}
