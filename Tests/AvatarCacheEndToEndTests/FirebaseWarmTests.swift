import Foundation
import GRDB
import Testing
@testable import AvatarCacheStore
import AvatarCacheTestKit

/// Firestore and Firebase Auth exports warmed by the binary: no password hash shown,
/// localhost photos in a private network namespace, shards (the readers themselves:
/// AvatarCacheExportsTests' FirebaseExportTests).
@Suite struct FirebaseWarmTests {
    @Test func warmReadsAnEmulatorExportAndNeverShowsItsPasswordHashes() throws {
        let directory = try Fixtures.temporaryDirectory("firebase-cli")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache").path
        let report = directory.appendingPathComponent("report.json").path
        let result = try Binary.run(["warm", Fixtures.firebaseExport("hedwig"), "--cache", cache, "--report", report, "--log-level", "debug"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("3 profiles"), "\(result.stdout)")
        #expect(result.stderr.contains("people from collection \\\"users\\\"") || result.stderr.contains("people from collection \"users\""), "\(result.stderr)")
        let reportText = try String(contentsOfFile: report, encoding: .utf8)
        #expect(reportText.contains("\"inputNotes\""))
        for text in [result.stdout, result.stderr, reportText] + (try FileManager.default.subpathsOfDirectory(atPath: cache)).compactMap({ try? String(contentsOfFile: cache + "/" + $0, encoding: .utf8) }) {
            #expect(!text.contains("fakeHash") && !text.contains("password=") && !text.contains("fakeSalt"))
        }
        // A map that names no collection of the export: exit 65, naming what there is.
        let wrong = try Binary.run(["warm", Fixtures.firebaseExport("hedwig"), "--cache", cache, "--map", "users=people"])
        #expect(wrong.status == 65)
        #expect(wrong.stderr.contains("no collection \"people\"") && wrong.stderr.contains("\"users\" (3 documents"), "\(wrong.stderr)")
    }

    /// The Bulletin's accounts name their photos on `localhost:8000`, as emulator exports do:
    /// read with --allow-private-networks in a private network namespace (only `lo` up, the
    /// photo server started inside), so nothing can leave the machine.
    @Test(.enabled(if: Namespaces.network, "needs a private network namespace (unshare -n): run as root"))
    func anExportsLocalhostPhotosAreFetchedInAPrivateNetworkNamespace() throws {
        let directory = try Fixtures.temporaryDirectory("firebase-netns")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        let avatars = path("www/images/emulation/avatars")
        try FileManager.default.createDirectory(atPath: avatars, withIntermediateDirectories: true)
        let photos = ["chelsea-96.jpg", "astronaut.jpg"]
        for (index, name) in ["Demoman", "Engineer", "Heavy", "Medic", "Pyro", "Scout", "Sniper", "Soldier", "Spy"].enumerated() {
            try FileManager.default.copyItem(atPath: Fixtures.repositoryRoot.path + "/samples/photos/" + photos[index % 2], toPath: "\(avatars)/\(name)ava.jpg")
        }
        let script = """
            set -u
            ip link set lo up
            python3 -m http.server 8000 --bind 127.0.0.1 --directory \(path("www")) 2>/dev/null &
            server=$!
            for _ in $(seq 1 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1', 8000))" 2>/dev/null && break; sleep 0.05; done
            \(Binary.url.path) warm \(Fixtures.firebaseExport("the-bulletin")) --cache \(path("cache")) --allow-private-networks --timeout 5 --report \(path("report.json"))
            status=$?
            kill $server
            wait $server 2>/dev/null
            exit $status
            """
        try script.write(toFile: path("run.sh"), atomically: true, encoding: .utf8)
        let result = try Binary.run(["-n", "--", "/bin/sh", path("run.sh")], executable: URL(fileURLWithPath: "/usr/bin/unshare"))
        #expect(result.status == 0, "\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("report.json")))) as? [String: Any])
        #expect(report["profiles"] as? Int == 17)
        #expect(report["downloaded"] as? Int == 9, "\(report["failures"] ?? "")")
        #expect(report["profilesWithPhoto"] as? Int == 9)
        #expect(!result.stderr.contains("fakeHash"))
    }

    /// `--shard` partitions a Firestore export as it does a JSON one: the shards together
    /// hold every profile once.
    @Test func shardsOfAFirestoreExportPartitionItsPeople() throws {
        let scratch = try Fixtures.temporaryDirectory("firebase-shards")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let root = try Fixtures.generateFirestoreExport(["--users", "40", "--photo-base", "", "--conversations", "5"], in: scratch)
        var seen: [String] = []
        for index in 0..<3 {
            let directory = scratch.appendingPathComponent("shard-\(index)").path
            let result = try Binary.run(["warm", root, "--cache", directory, "--shard", "\(index)/3", "--report", directory + ".json"])
            #expect(result.status == 0, "\(result.stderr)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory + ".json"))) as? [String: Any])
            let profiles = try #require(report["profiles"] as? Int)
            #expect(profiles > 0 && report["recordsInOtherShards"] as? Int == 40 - profiles)
            let queue = try DatabaseQueue(path: URL(fileURLWithPath: directory).appendingPathComponent(CacheIndex.fileName).path)
            seen += try queue.read { try String.fetchAll($0, sql: "SELECT id FROM profile") }
        }
        #expect(seen.count == 40 && Set(seen).count == 40)
    }
}
