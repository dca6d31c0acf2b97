import Foundation
import Testing
import AvatarCacheTestKit

/// `avatar-cache inspect`: what a warm would read, printed before it runs; nothing
/// written; and the `--map` line it prints makes a warm read the same people.
@Suite struct InspectCommandTests {
    @Test(arguments: ["hedwig", "journey-home", "bsclibrary-2022"])
    func inspectPrintsTheChoiceAndItsMapLineWarmsTheSamePeople(export: String) throws {
        let directory = try Fixtures.temporaryDirectory("inspect")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = Fixtures.firebaseExport(export)
        let untouched = directory.appendingPathComponent("never-made").path

        // A warm's command line, "warm" replaced by "inspect".
        let text = try Binary.run(["inspect", path, "--cache", untouched, "--budget", "50MB", "--wait", "1", "--concurrency", "4"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("people from collection \""), "\(text.stdout)")
        #expect(!FileManager.default.fileExists(atPath: untouched), "inspect writes nothing")
        let line = try #require(text.stdout.split(separator: "\n").first { $0.contains("reproduce: ") }, "\(text.stdout)")
        let mapArguments = line.components(separatedBy: "reproduce: ")[1].components(separatedBy: " ").filter { $0 != "--map" }
            .map { $0.hasPrefix("'") && $0.hasSuffix("'") ? String($0.dropFirst().dropLast()) : $0 }

        let json = try Binary.run(["inspect", path, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let inspections = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let choice = try #require((inspections.first?["choices"] as? [[String: Any]])?.first)
        #expect(choice["map"] as? [String] == mapArguments, "\(json.stdout)")
        #expect((inspections.first?["sample"] as? [[String: Any]])?.isEmpty == false)

        // Warmed without a map and with the printed one: the same people, drawn the same.
        func users(_ map: [String]) throws -> NSDictionary {
            let cache = directory.appendingPathComponent("cache-\(map.count)").path
            let warm = try Binary.run(["warm", path, "--cache", cache] + map.flatMap { ["--map", $0] })
            #expect(warm.status == 0, "\(warm.stderr)")
            let metadata = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cache + "/metadata.json"))) as? [String: Any]
            return try #require(metadata?["users"] as? NSDictionary)
        }
        let plain = try users([]), mapped = try users(mapArguments)
        #expect(plain.count > 0 && plain == mapped, "\(plain) against \(mapped)")
    }

    @Test func aDocumentNameOnAJSONExportIsRefusedNamingIt() throws {
        let directory = try Fixtures.temporaryDirectory("inspect-json")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = directory.appendingPathComponent("users.json")
        try Data(#"{"users": [{"id": "a", "fullName": "Ana Test"}]}"#.utf8).write(to: export)
        let result = try Binary.run(["inspect", export.path, "--map", "id=__name__"])
        #expect(result.status == 65, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("__name__") && result.stderr.contains(export.path), "\(result.stderr)")
    }
}
