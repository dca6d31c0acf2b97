import Foundation
import GRDB

// The index's rows as GRDB records: each table's columns named once, in its `Columns`,
// read and written by name (and listed from there where SQL copies rows between
// caches: `CacheMerge`). Dates are stored as seconds since 1970 (REAL), as the
// schema (`CacheIndex.migrator`) says.

/// A row of `entry`: one source's (or monogram's) cached image, without its files.
package struct EntryRecord: FetchableRecord, PersistableRecord, Sendable {
    package static let databaseTableName = "entry"

    package enum Columns: String, ColumnExpression, CaseIterable {
        case key
        case kind
        case contentSHA256
        case lastAccess
        case fetchedAt
        case freshUntil
        case etag
        case lastModified
        case sourceBytes
        case sourceFormat
        case sourceWidth
        case sourceHeight
        case placeholderHash
        case placeholderColor
    }

    var key: String
    var kind: AvatarKind
    var contentSHA256: String
    var lastAccess: Date
    var fetchedAt: Date
    var freshUntil: Date?
    var etag: String?
    var lastModified: String?
    var sourceBytes: Int?
    var sourceFormat: ImageFormat?
    var sourceWidth: Int?
    var sourceHeight: Int?
    var placeholder: Placeholder?

    init(key: String, entry: CacheEntry) {
        self.key = key
        kind = entry.kind
        contentSHA256 = entry.contentSHA256
        lastAccess = entry.lastAccess
        fetchedAt = entry.fetchedAt
        freshUntil = entry.freshUntil
        etag = entry.etag
        lastModified = entry.lastModified
        sourceBytes = entry.sourceBytes
        sourceFormat = entry.sourceFormat
        sourceWidth = entry.sourceWidth
        sourceHeight = entry.sourceHeight
        placeholder = entry.placeholder
    }

    package init(row: Row) {
        key = row[Columns.key]
        kind = AvatarKind(rawValue: row[Columns.kind]) ?? .photo
        contentSHA256 = row[Columns.contentSHA256]
        lastAccess = Date(indexValue: row[Columns.lastAccess])
        fetchedAt = Date(indexValue: row[Columns.fetchedAt])
        freshUntil = (row[Columns.freshUntil] as Double?).map(Date.init(indexValue:))
        etag = row[Columns.etag]
        lastModified = row[Columns.lastModified]
        sourceBytes = row[Columns.sourceBytes]
        sourceFormat = (row[Columns.sourceFormat] as String?).flatMap(ImageFormat.init(rawValue:))
        sourceWidth = row[Columns.sourceWidth]
        sourceHeight = row[Columns.sourceHeight]
        // Absent from an index this process could not upgrade (read-only): no placeholder.
        placeholder = (row[Columns.placeholderColor] as String?).map { Placeholder(thumbHash: row[Columns.placeholderHash], color: $0) }
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.key] = key
        container[Columns.kind] = kind.rawValue
        container[Columns.contentSHA256] = contentSHA256
        container[Columns.lastAccess] = lastAccess.indexValue
        container[Columns.fetchedAt] = fetchedAt.indexValue
        container[Columns.freshUntil] = freshUntil?.indexValue
        container[Columns.etag] = etag
        container[Columns.lastModified] = lastModified
        container[Columns.sourceBytes] = sourceBytes
        container[Columns.sourceFormat] = sourceFormat?.rawValue
        container[Columns.sourceWidth] = sourceWidth
        container[Columns.sourceHeight] = sourceHeight
        // Named only when there is one: the rows of an entry without (a cache taken over
        // from its metadata.json) go into any schema since v1.
        if let placeholder {
            container[Columns.placeholderHash] = placeholder.thumbHash
            container[Columns.placeholderColor] = placeholder.color
        }
    }

    /// The entry as the cache's document has it, with its files by tier.
    func entry(files: [EntryFileRecord]) -> CacheEntry {
        var byTier: [String: CacheFile] = [:]
        for file in files { byTier[String(file.tier)] = file.file }
        let largest = files.max { $0.tier < $1.tier }
        let distinct = Dictionary(files.map { ($0.filename, $0.fileSize) }, uniquingKeysWith: { a, _ in a })
        return CacheEntry(
            kind: kind, filename: largest?.filename ?? "", lastAccess: lastAccess,
            fileSize: distinct.values.reduce(0, +), contentSHA256: contentSHA256,
            sourceBytes: sourceBytes, sourceFormat: sourceFormat, sourceWidth: sourceWidth, sourceHeight: sourceHeight,
            fetchedAt: fetchedAt, freshUntil: freshUntil, etag: etag, lastModified: lastModified,
            files: byTier, placeholder: placeholder)
    }
}

/// A row of `entryFile`: one tier's file of an entry (tiers may share a file).
package struct EntryFileRecord: FetchableRecord, PersistableRecord, Sendable {
    package static let databaseTableName = "entryFile"

    package enum Columns: String, ColumnExpression, CaseIterable {
        case entryKey
        case tier
        case filename
        case width
        case height
        case fileSize
        case sha256
    }

    static let entry = belongsTo(EntryRecord.self)

    var entryKey: String
    var tier: Int
    var filename: String
    var width: Int
    var height: Int
    var fileSize: Int64
    var sha256: String?

    init(entryKey: String, tier: Int, file: CacheFile) {
        self.entryKey = entryKey
        self.tier = tier
        filename = file.filename
        width = file.width
        height = file.height
        fileSize = file.fileSize
        sha256 = file.sha256
    }

    package init(row: Row) {
        entryKey = row[Columns.entryKey]
        tier = row[Columns.tier]
        filename = row[Columns.filename]
        width = row[Columns.width]
        height = row[Columns.height]
        fileSize = row[Columns.fileSize]
        sha256 = row[Columns.sha256]
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.entryKey] = entryKey
        container[Columns.tier] = tier
        container[Columns.filename] = filename
        container[Columns.width] = width
        container[Columns.height] = height
        container[Columns.fileSize] = fileSize
        container[Columns.sha256] = sha256
    }

    var file: CacheFile {
        CacheFile(filename: filename, width: width, height: height, fileSize: fileSize, sha256: sha256)
    }
}

/// A row of `failure`: a source that failed lately, not asked for again before
/// `retryAfter`.
package struct FailureRow: FetchableRecord, PersistableRecord, Sendable {
    package static let databaseTableName = "failure"

    package enum Columns: String, ColumnExpression, CaseIterable {
        case key
        case failureClass = "class"
        case reason
        case failedAt
        case retryAfter
    }

    var key: String
    var failure: FailureRecord

    init(key: String, failure: FailureRecord) {
        self.key = key
        self.failure = failure
    }

    package init(row: Row) {
        key = row[Columns.key]
        failure = FailureRecord(failureClass: FailureClass(rawValue: row[Columns.failureClass]) ?? .network,
                                reason: row[Columns.reason], failedAt: Date(indexValue: row[Columns.failedAt]),
                                retryAfter: Date(indexValue: row[Columns.retryAfter]))
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.key] = key
        container[Columns.failureClass] = failure.failureClass.rawValue
        container[Columns.reason] = failure.reason
        container[Columns.failedAt] = failure.failedAt.indexValue
        container[Columns.retryAfter] = failure.retryAfter.indexValue
    }
}

/// A row of `profile`: per user id, what to draw. What a profile *shows* (its photo's
/// files, else its monogram's, else nothing) is not stored: it is read from the entries
/// when asked, so an eviction never leaves a profile pointing at a deleted file. The text
/// colour and the monogram's key follow from the stored fields.
package struct ProfileRecord: FetchableRecord, PersistableRecord, Sendable, Equatable {
    package static let databaseTableName = "profile"

    package enum Columns: String, ColumnExpression, CaseIterable {
        case id
        case displayName
        case initials
        case glyph
        case color
        case photoSource
        case updatedAt
        /// The position, across a run's exports, of the record that last wrote the row.
        case readOrder
    }

    var id: String
    var displayName: String
    var initials: String
    var glyph: MonogramGlyph?
    var color: String
    var photoSource: String?
    var updatedAt: Date

    init(id: String, displayName: String, initials: String, glyph: MonogramGlyph?, color: String,
         photoSource: String?, updatedAt: Date) {
        self.id = id
        self.displayName = displayName
        self.initials = initials
        self.glyph = glyph
        self.color = color
        self.photoSource = photoSource
        self.updatedAt = updatedAt
    }

    package init(row: Row) {
        id = row[Columns.id]
        displayName = row[Columns.displayName]
        initials = row[Columns.initials]
        glyph = (row[Columns.glyph] as String?).flatMap(MonogramGlyph.init(rawValue:))
        color = row[Columns.color]
        photoSource = row[Columns.photoSource]
        updatedAt = Date(indexValue: row[Columns.updatedAt])
    }

    /// `readOrder` is written only by a run (`ProfileRecords.saveSQL`) and kept by merge.
    package func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id
        container[Columns.displayName] = displayName
        container[Columns.initials] = initials
        container[Columns.glyph] = glyph?.rawValue
        container[Columns.color] = color
        container[Columns.photoSource] = photoSource
        container[Columns.updatedAt] = updatedAt.indexValue
    }

    var textColor: String { AvatarColor.textColor(on: color) }

    package var monogram: MonogramSpec {
        MonogramSpec(initials: initials, glyph: glyph, background: color, foreground: textColor)
    }
}

extension CaseIterable where Self: ColumnExpression & RawRepresentable, RawValue == String {
    /// The columns as SQL lists them: `key, kind, …`.
    package static var list: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
