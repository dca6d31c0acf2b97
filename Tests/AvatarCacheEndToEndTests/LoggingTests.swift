import Foundation
import Testing
import AvatarCacheStore
import AvatarCacheTestKit

/// What the log says: each source's decision and each hop at debug and trace level without
/// secrets, JSON lines with their types, fatal errors as JSON lines too.
@Suite(.serialized) struct LoggingTests {
    @Test func debugTellsEachSourcesDecisionAndTraceEachHopWithoutSecrets() throws {
        let server = try FixtureServer(routes: [
            "/signed.jpg?sig=SECRET-SIGNATURE": .ok(bytes: try Fixtures.photo("astronaut.jpg")),
            "/monica.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg")),
        ])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("log-levels")
        defer { try? FileManager.default.removeItem(at: directory) }
        let monica = """
            {"data": [
              {"id": 1, "first_name": "Sig", "last_name": "Ned", "information": {"avatar": {"source": "gravatar", "url": "\(server.url("/signed.jpg"))?sig=SECRET-SIGNATURE"}}},
              {"id": 2, "first_name": "Mon", "last_name": "Ica", "information": {"avatar": {"source": "photo", "url": "\(server.url("/monica.jpg"))"}}}
            ]}
            """
        let export = directory.appendingPathComponent("contacts.json").path
        try Data(monica.utf8).write(to: URL(fileURLWithPath: export))
        let common = ["--allow-private-networks", "--monica-host", "127.0.0.1:\(server.port)"]
        let token = ["AVATAR_CACHE_MONICA_TOKEN": "TOKEN-VALUE-NEVER-SHOWN"]
        func warm(_ cache: String, _ level: String) throws -> Binary.Result {
            try Binary.run(["warm", export, "--cache", directory.appendingPathComponent(cache).path, "--log-level", level] + common, environment: token)
        }
        let info = try warm("a", "info")
        #expect(info.status == 0 && !info.stderr.contains("decision="), "\(info.stderr)")
        let debug = try warm("b", "debug")
        #expect(debug.stderr.components(separatedBy: "decision=downloaded, decoded").count - 1 == 2, "\(debug.stderr)")
        #expect(debug.stderr.contains("fetchMs=") && debug.stderr.contains("renderMs="))
        #expect(!debug.stderr.contains("http hop"), "hops are trace, not debug")
        let again = try warm("b", "debug")
        #expect(again.stderr.contains("decision=fresh until"), "\(again.stderr)")
        let trace = try warm("c", "trace")
        #expect(trace.stderr.components(separatedBy: "http hop").count - 1 == 2, "\(trace.stderr)")
        #expect(trace.stderr.contains("token=sent (not shown)") && trace.stderr.contains("token=none"))
        #expect(trace.stderr.contains("signed.jpg?…"), "the query is not shown: \(trace.stderr)")
        for output in [info, debug, again, trace] {
            #expect(!output.stderr.contains("TOKEN-VALUE") && !output.stdout.contains("TOKEN-VALUE"))
        }
        let hops = trace.stderr.split(separator: "\n").filter { $0.contains("http hop") }
        #expect(hops.count == 2 && hops.allSatisfy { !$0.contains("SECRET-SIGNATURE") }, "a hop never shows the query: \(hops)")
    }

    @Test func jsonLogLinesKeepNumbersAndBooleansAndEachStagesCores() throws {
        let directory = try Fixtures.temporaryDirectory("json-log")
        defer { try? FileManager.default.removeItem(at: directory) }
        // JSON log lines keep numbers and booleans as JSON numbers and booleans.
        let server = try FixtureServer(routes: [:])
        defer { server.shutdown() }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: server.url("/missing.jpg"))], in: directory)
        let json = try Binary.run(["warm", export, "--cache", directory.appendingPathComponent("c").path, "--allow-private-networks",
                            "--log-format", "json", "--log-level", "debug"])
        #expect(json.status == 0, "\(json.stderr)")
        let lines = json.stderr.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let failed = try #require(lines.first { $0["message"] as? String == "source failed" }, "\(json.stderr)")
        #expect(failed["keptCachedPhoto"] as? Bool == false && !(failed["keptCachedPhoto"] is String), "\(failed)")
        let stage = try #require(lines.first { $0["message"] as? String == "stage done" })
        #expect(stage["seconds"] is NSNumber && !(stage["seconds"] is String), "\(stage)")
        // Cores used per stage: the process's CPU time in the stage over its wall time.
        let stages = lines.filter { $0["message"] as? String == "stage done" }
        #expect(stages.count >= 4 && stages.allSatisfy { $0["cpuSeconds"] is NSNumber && $0["cores"] is NSNumber }, "\(stages)")
    }

    @Test func fatalErrorsAreJSONLinesWhenTheLogIs() throws {
        let directory = try Fixtures.temporaryDirectory("json-fatal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        // The lock held by another run: exit 75.
        let held = try CacheLock.acquire(in: CacheDirectory(root: cache))
        let locked = try Binary.run(["warm", export, "--cache", cache.path, "--log-format", "json"])
        held.release()
        // A metrics file in a folder that does not exist: exit 64, before the run.
        let badMetrics = try Binary.run(["warm", export, "--cache", cache.path, "--log-format", "json", "--metrics-file", directory.appendingPathComponent("no/such.prom").path])
        // The pipeline file's own log-format counts too.
        let pipeline = directory.appendingPathComponent("p.yml")
        try Data("cache: \(cache.path)\ninputs: [\(directory.path)/missing.json]\nlog-format: json\n".utf8).write(to: pipeline)
        let missing = try Binary.run(["run", pipeline.path])
        for (result, code) in [(locked, 75), (badMetrics, 64), (missing, 65)] {
            #expect(result.status == Int32(code), "\(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(!lines.isEmpty)
            for line in lines {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["time"] as? String != nil && object?["message"] as? String != nil, "a JSON line: \(line)")
            }
            let last = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as? [String: Any]
            #expect(last?["level"] as? String == "error" && last?["exitCode"] as? Int == code, "\(lines.last!)")
        }
    }
}
