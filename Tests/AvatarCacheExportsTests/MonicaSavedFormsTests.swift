import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheModel
import AvatarCacheTestKit

/// Monica exports as people save them: the pages in one array, a folder of pages,
/// contacts as NDJSON (its API's bodies, warmed: the end-to-end MessyExportTests).
@Suite struct MonicaSavedFormsTests {
    func readMonica(_ path: String) throws -> (profiles: [Profile], bad: [BadRecord]) {
        try Fixtures.read(ExportFormat.detect(path: path).reader(path: path, limits: ReaderLimits()))
    }

    @Test func monicaPagesInOneArrayInAFolderAndAsNDJSONAreRead() throws {
        let directory = try Fixtures.temporaryDirectory("monica-forms")
        defer { try? FileManager.default.removeItem(at: directory) }
        func write(_ name: String, _ text: String) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        let page1 = "{\"data\": [\(Fixtures.monicaContact(1, "Ada", "Lovelace")), \(Fixtures.monicaContact(2, "Alan", "Turing"))], \"meta\": {\"current_page\": 1}}"
        let page2 = "{\"data\": [\(Fixtures.monicaContact(3, "Grace", "Hopper"))], \"meta\": {\"current_page\": 2}}"
        // `jq -s . page-*.json`: the saved pages in one array.
        let slurped = try readMonica(try write("slurped.json", "[\(page1),\n\(page2)]"))
        #expect(slurped.profiles.map(\.id) == ["1", "2", "3"] && slurped.bad.isEmpty, "\(slurped.bad)")
        #expect(slurped.profiles.map(\.initials) == ["AL", "AT", "GH"])
        // A folder of saved pages.
        _ = try write("pages/page-1.json", page1)
        _ = try write("pages/page-2.json", page2)
        #expect(try ExportFormat.detect(path: directory.appendingPathComponent("pages").path) == .monica)
        let folder = try readMonica(directory.appendingPathComponent("pages").path)
        #expect(folder.profiles.map(\.id) == ["1", "2", "3"] && folder.bad.isEmpty)
        // Contacts as NDJSON, one per line.
        let ndjson = [Fixtures.monicaContact(4, "Katherine", "Johnson"), Fixtures.monicaContact(5, "Hedy", "Lamarr")]
            .map { $0.replacingOccurrences(of: "\n", with: " ") }.joined(separator: "\n")
        let lines = try readMonica(try write("contacts.ndjson", ndjson))
        #expect(lines.profiles.map(\.id) == ["4", "5"] && lines.bad.isEmpty, "\(lines.bad)")
        HostileLedger.record("inputs", "Monica exports as saved", tried: "saved pages in one JSON array (jq -s), a folder of pages, contacts as NDJSON", count: 3,
                             outcome: "every contact read, the folder detected as Monica's")
    }
}
