import Foundation
import GRDB
import Testing
@testable import AvatarCacheStore
import AvatarCacheTestKit

/// The test kit's `LookupIndex` writes, without the store, the index the lookup library's
/// tests read: its tables must stay the store's. Every column it declares is the store's,
/// of the same type, nullability and key; every column the store requires (NOT NULL, no
/// default) it has; so a row it writes is a row the store could have written.
struct LookupIndexSchemaTests {
    struct Column: Hashable, CustomStringConvertible {
        var name: String, type: String, notNull: Bool, hasDefault: Bool, key: Int
        var description: String { "\(name) \(type)\(notNull ? " NOT NULL" : "")\(key > 0 ? " key \(key)" : "")" }
    }

    func columns(_ file: URL, _ table: String) throws -> [Column] {
        let queue = try DatabaseQueue(path: file.path)
        return try queue.read { db in
            try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").map {
                Column(name: $0["name"], type: ($0["type"] as String).uppercased(), notNull: $0["notnull"] as Bool,
                       hasDefault: ($0["dflt_value"] as String?) != nil, key: $0["pk"])
            }
        }
    }

    @Test func theTestKitsIndexHasTheStoresTables() throws {
        let root = try Fixtures.temporaryDirectory("lookup-index-schema")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = root.appendingPathComponent("store"), kit = root.appendingPathComponent("kit")
        try CacheDirectory(root: store).create()
        try CacheIndex.open(CacheDirectory(root: store), create: true).close()
        let written = try LookupIndex(in: kit)
        written.close()
        for table in ["entry", "entryFile", "profile"] {
            let theirs = try columns(store.appendingPathComponent(CacheIndex.fileName), table)
            let ours = try columns(kit.appendingPathComponent(LookupIndex.fileName), table)
            #expect(!ours.isEmpty && !theirs.isEmpty, "\(table)")
            let byName = Dictionary(uniqueKeysWithValues: theirs.map { ($0.name, $0) })
            for column in ours {
                let store = byName[column.name]
                #expect(store != nil, "\(table).\(column.name): not a column of the store's")
                if let store {
                    #expect(store.type == column.type && store.notNull == column.notNull && store.key == column.key,
                            "\(table).\(column.name): the store's is \(store), the kit's \(column)")
                }
            }
            let required = theirs.filter { $0.notNull && !$0.hasDefault }.map(\.name)
            let missing = Set(required).subtracting(ours.map(\.name))
            #expect(missing.isEmpty, "\(table): the kit leaves out the store's required \(missing.sorted())")
        }
    }
}
