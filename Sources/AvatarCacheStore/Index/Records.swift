import AvatarCacheModel
import AvatarCacheMonograms
import AvatarCacheSupport
import Foundation
internal import GRDB

// The index's rows as GRDB records: each table's columns named once, in its `Columns`,
// read and written by name (and listed from there where SQL copies rows between
// caches: `CacheMerge`). Dates are stored as seconds since 1970 (REAL), as the
// schema (`CacheIndex.migrator`) says.

/// A row of `entry`: one source's (or monogram's) cached image, without its files.
struct EntryRecord: FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "entry"

    enum Columns: String, ColumnExpression, CaseIterable {
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

    init(row: Row) {
        self.init(row: row, at: Positions(columnNames: row.columnNames))
    }

    /// Where each column is in a statement's rows (nil: not selected), found once per
    /// statement. GRDB finds a column by name on every read, hashing a lower-cased copy
    /// of the name: most of the time a re-run spent reading entries.
    struct Positions {
        let key, kind, contentSHA256, lastAccess, fetchedAt, freshUntil, etag, lastModified,
            sourceBytes, sourceFormat, sourceWidth, sourceHeight, placeholderHash, placeholderColor: Int?

        init(columnNames: some Collection<String>) {
            let position = ColumnPositions(columnNames)
            key = position[Columns.key]
            kind = position[Columns.kind]
            contentSHA256 = position[Columns.contentSHA256]
            lastAccess = position[Columns.lastAccess]
            fetchedAt = position[Columns.fetchedAt]
            freshUntil = position[Columns.freshUntil]
            etag = position[Columns.etag]
            lastModified = position[Columns.lastModified]
            sourceBytes = position[Columns.sourceBytes]
            sourceFormat = position[Columns.sourceFormat]
            sourceWidth = position[Columns.sourceWidth]
            sourceHeight = position[Columns.sourceHeight]
            placeholderHash = position[Columns.placeholderHash]
            placeholderColor = position[Columns.placeholderColor]
        }
    }

    init(row: Row, at p: Positions) {
        key = row.string(p.key) ?? ""
        kind = row.string(p.kind).flatMap(AvatarKind.init(rawValue:)) ?? .photo
        contentSHA256 = row.string(p.contentSHA256) ?? ""
        lastAccess = Date(indexValue: row.double(p.lastAccess) ?? 0)
        fetchedAt = Date(indexValue: row.double(p.fetchedAt) ?? 0)
        freshUntil = row.double(p.freshUntil).map(Date.init(indexValue:))
        etag = row.string(p.etag)
        lastModified = row.string(p.lastModified)
        sourceBytes = row.int(p.sourceBytes)
        sourceFormat = row.string(p.sourceFormat).flatMap(ImageFormat.init(rawValue:))
        sourceWidth = row.int(p.sourceWidth)
        sourceHeight = row.int(p.sourceHeight)
        // Absent from an index this process could not upgrade (read-only): no placeholder.
        placeholder = row.string(p.placeholderColor).map { Placeholder(thumbHash: row.string(p.placeholderHash), color: $0) }
    }

    func encode(to container: inout PersistenceContainer) {
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
struct EntryFileRecord: FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "entryFile"

    enum Columns: String, ColumnExpression, CaseIterable {
        case entryKey
        case tier
        case filename
        case width
        case height
        case fileSize
        case sha256
    }

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

    init(row: Row) {
        self.init(row: row, at: Positions(columnNames: row.columnNames))
    }

    /// Where each column is in a statement's rows, found once per statement (as
    /// `EntryRecord.Positions`).
    struct Positions {
        let entryKey, tier, filename, width, height, fileSize, sha256: Int?

        init(columnNames: some Collection<String>) {
            let position = ColumnPositions(columnNames)
            entryKey = position[Columns.entryKey]
            tier = position[Columns.tier]
            filename = position[Columns.filename]
            width = position[Columns.width]
            height = position[Columns.height]
            fileSize = position[Columns.fileSize]
            sha256 = position[Columns.sha256]
        }
    }

    init(row: Row, at p: Positions) {
        entryKey = row.string(p.entryKey) ?? ""
        tier = row.int(p.tier) ?? 0
        filename = row.string(p.filename) ?? ""
        width = row.int(p.width) ?? 0
        height = row.int(p.height) ?? 0
        fileSize = Int64(row.int(p.fileSize) ?? 0)
        sha256 = row.string(p.sha256)
    }

    func encode(to container: inout PersistenceContainer) {
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
struct FailureRow: FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "failure"

    enum Columns: String, ColumnExpression, CaseIterable {
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

    init(row: Row) {
        key = row[Columns.key]
        failure = FailureRecord(failureClass: FailureClass(rawValue: row[Columns.failureClass]) ?? .network,
                                reason: row[Columns.reason], failedAt: Date(indexValue: row[Columns.failedAt]),
                                retryAfter: Date(indexValue: row[Columns.retryAfter]))
    }

    func encode(to container: inout PersistenceContainer) {
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
struct ProfileRecord: FetchableRecord, PersistableRecord, Sendable, Equatable {
    static let databaseTableName = "profile"

    enum Columns: String, ColumnExpression, CaseIterable {
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

    init(row: Row) {
        id = row[Columns.id]
        displayName = row[Columns.displayName]
        initials = row[Columns.initials]
        glyph = (row[Columns.glyph] as String?).flatMap(MonogramGlyph.init(rawValue:))
        color = row[Columns.color]
        photoSource = row[Columns.photoSource]
        updatedAt = Date(indexValue: row[Columns.updatedAt])
    }

    /// `readOrder` is written only by a run (`ProfileRecords.saveSQL`) and kept by merge.
    func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id
        container[Columns.displayName] = displayName
        container[Columns.initials] = initials
        container[Columns.glyph] = glyph?.rawValue
        container[Columns.color] = color
        container[Columns.photoSource] = photoSource
        container[Columns.updatedAt] = updatedAt.indexValue
    }

    var textColor: String { AvatarColor.textColor(on: color) }

    var monogram: MonogramSpec {
        MonogramSpec(initials: initials, glyph: glyph, background: color, foreground: textColor)
    }
}

extension CaseIterable where Self: ColumnExpression & RawRepresentable, RawValue == String {
    /// The columns as SQL lists them: `key, kind, …`.
    static var list: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// The position of each column name in a statement's rows, the first of a name, as
/// SQLite compares names (ignoring ASCII case).
struct ColumnPositions {
    private var byName: [String: Int] = [:]

    init(_ names: some Collection<String>) {
        for (index, name) in names.enumerated() where byName[name.lowercased()] == nil {
            byName[name.lowercased()] = index
        }
    }

    subscript(column: some ColumnExpression & RawRepresentable<String>) -> Int? {
        byName[column.rawValue.lowercased()]
    }
}

extension Row {
    /// The value at `position` (none when the statement has no such column, or it is NULL).
    func string(_ position: Int?) -> String? { position.flatMap { self[$0] } }
    func double(_ position: Int?) -> Double? { position.flatMap { self[$0] } }
    func int(_ position: Int?) -> Int? { position.flatMap { self[$0] } }
}
