import Foundation
import NIOCore
import Testing
@testable import AvatarCache
@testable import AvatarCacheConfiguration
@testable import AvatarCacheExports
@testable import AvatarCacheFetching
@testable import AvatarCacheImaging
@testable import AvatarCachePipeline
@testable import AvatarCacheReporting
@testable import AvatarCacheStore
@testable import AvatarCacheLookup
@testable import AvatarCacheModel
@testable import AvatarCacheMonograms
@testable import AvatarCacheSupport
#if canImport(Glibc)
import Glibc
#endif

/// What an operator meets first (issue 14): mistakes found before the cache is touched,
/// and output files with their own exit code.
@Suite struct OperatorTests {
    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> CLITests.Result {
        try CLITests.run(arguments, environment: environment)
    }

    @Test func aMissingExportLeavesNoTraceInANewCacheOrAGoodOne() throws {
        let directory = try Fixtures.temporaryDirectory("missing-export")
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("no-such-export.json").path
        // A new directory: not created.
        let fresh = directory.appendingPathComponent("fresh").path
        let first = try run(["warm", missing, "--cache", fresh])
        #expect(first.status == 65 && first.stderr.contains("no such file"), "\(first.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fresh), "no directory, lock or marker for a run that could not start")

        // A good cache: nothing changes, and verify does not think a run was killed.
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        #expect(try run(["warm", export, "--cache", cache]).status == 0)
        let before = try Fixtures.fileNames(in: URL(fileURLWithPath: cache))
        let garbage = directory.appendingPathComponent("garbage.txt").path
        try Data("not an export at all".utf8).write(to: URL(fileURLWithPath: garbage))
        for bad in [missing, garbage] {
            let result = try run(["warm", export, bad, "--cache", cache])
            #expect(result.status == 65, "\(bad): \(result.stderr)")
        }
        #expect(try Fixtures.fileNames(in: URL(fileURLWithPath: cache)) == before, "not a file added or removed")
        let verify = try run(["verify", "--cache", cache])
        #expect(verify.status == 0 && !verify.stdout.contains("killed"), "\(verify.stdout)")
    }

    @Test func outputFilesThatCannotBeWrittenHaveTheirOwnExitCode() throws {
        let directory = try Fixtures.temporaryDirectory("outputs")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        // A report in a directory that does not exist: found before the run (usage, 64).
        let early = try run(["warm", export, "--cache", cache, "--report", directory.appendingPathComponent("nope/report.json").path])
        #expect(early.status == 64 && early.stderr.contains("does not exist"), "\(early.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cache))
        let metricsIsADirectory = try run(["warm", export, "--cache", cache, "--metrics-file", directory.path])
        #expect(metricsIsADirectory.status == 64 && metricsIsADirectory.stderr.contains("is a directory"), "\(metricsIsADirectory.stderr)")

        // The step summary (an environment variable) is only found unwritable after the
        // run: exit 74, the other outputs written, the cache saved.
        let report = directory.appendingPathComponent("report.json").path
        let late = try run(["warm", export, "--cache", cache, "--report", report], environment: ["GITHUB_STEP_SUMMARY": directory.path])
        #expect(late.status == 74, "\(late.stderr)")
        #expect(late.stderr.contains("step summary") && late.stderr.contains("the cache saved"), "\(late.stderr)")
        #expect(FileManager.default.fileExists(atPath: report), "the report is written all the same")
        #expect(try run(["verify", "--cache", cache]).status == 0)
    }

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
        func warm(_ cache: String, _ level: String) throws -> CLITests.Result {
            try run(["warm", export, "--cache", directory.appendingPathComponent(cache).path, "--log-level", level] + common, environment: token)
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
        let json = try run(["warm", export, "--cache", directory.appendingPathComponent("c").path, "--allow-private-networks",
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

    @Test func aBinaryFileGivenAsAnExportIsNotEchoed() throws {
        let directory = try Fixtures.temporaryDirectory("binary-export")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A binary file given as an export: its bytes are not echoed.
        let binary = directory.appendingPathComponent("photo.bin").path
        try Data([0x00, 0xFF, 0xD8, 0xFF, 0xE0, 0x01, 0x02, 0x1B, 0x5B, 0x32, 0x4A] + Array(repeating: 0x80, count: 64)).write(to: URL(fileURLWithPath: binary))
        let refused = try run(["warm", binary, "--cache", directory.appendingPathComponent("d").path])
        #expect(refused.status == 65 && refused.stderr.contains("it is not text"), "\(refused.stderr)")
        #expect(!refused.stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{FFFD}" || $0 == "\0" }, "no raw bytes on the terminal")
    }

    @Test func helpNamesEachOptionsValuesOnceAndSpeaksToUsers() throws {
        // --help names each option's allowed values once.
        let help = try run(["warm", "--help"])
        let logLevelHelp = try #require(help.stdout.range(of: "--log-level").map { String(help.stdout[$0.lowerBound...].prefix(220)) })
        #expect(logLevelHelp.components(separatedBy: "critical").count - 1 == 1, "\(logLevelHelp)")
        let formatHelp = try #require(help.stdout.range(of: "--format <format>").map { String(help.stdout[$0.lowerBound...].prefix(220)) })
        #expect(formatHelp.components(separatedBy: "nexus-conversations").count - 1 == 1, "\(formatHelp)")
        // Help speaks to users, not of the documents the project came from.
        for command in ["warm", "lookup", "merge", "prune", "verify", "stats", "run"] {
            let text = try run([command, "--help"]).stdout
            #expect(!text.contains("seed 0") && !text.contains("PRD"), "\(command) --help")
        }
    }

    @Test func oneDefaultForTheBudgetAndTrimRatioAndTheReadersOwnRecordLimit() throws {
        // One range for the trim ratio, flags and pipeline files alike.
        let directory = try Fixtures.temporaryDirectory("settings")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "small", name: "Small", url: nil),
                                                    (id: "large", name: String(repeating: "L", count: 5_000), url: nil)], in: directory)
        let cache = directory.appendingPathComponent("c").path
        for command in [["prune", "--cache", cache], ["merge", cache, "--into", cache + "-m"]] {
            let result = try run(command + ["--trim-ratio", "0.001"])
            #expect(result.status == 64 && result.stderr.contains("between 0.01 and 1.0"), "\(command[0]): \(result.stderr)")
        }
        #expect(throws: PipelineFile.Errors.self) { try PipelineFile.parse("trim-ratio: 0.001\n", file: "p.yml", environment: [:]) }
        #expect(WarmConfiguration(exports: ["x"], cacheDirectory: URL(fileURLWithPath: "/tmp")).budgetBytes == Pruner.defaultBudgetBytes)
        // The readers' record limit is its own setting, not --max-bytes.
        let limited = try run(["warm", export, "--cache", cache, "--max-record-bytes", "2KB", "--max-bytes", "50MB", "--report", cache + ".json"])
        #expect(limited.status == 0, "\(limited.stderr)")
        #expect(limited.stderr.contains("larger than 2000 bytes") && limited.stdout.contains("1 profiles"), "\(limited.stdout) \(limited.stderr)")
        let roomy = try run(["warm", export, "--cache", cache + "2", "--max-bytes", "1KB"])
        #expect(roomy.status == 0 && roomy.stdout.contains("2 profiles"), "a small --max-bytes leaves records alone: \(roomy.stdout) \(roomy.stderr)")
    }

    @Test func networkErrorsAreClassifiedByTheirTypeNotTheirText() {
        struct Worded: Error, CustomStringConvertible { var description: String }
        #expect(HTTPFetcher.classify(ChannelError.connectTimeout(.seconds(1))).failureClass == .timeout)
        #expect(HTTPFetcher.classify(IOError(errnoCode: ETIMEDOUT, reason: "connect")).failureClass == .timeout)
        #expect(HTTPFetcher.classify(IOError(errnoCode: ECONNREFUSED, reason: "connect")).failureClass == .network)
        // Words in a message decide nothing: a proxy's page saying "timeout" is not one.
        #expect(HTTPFetcher.classify(Worded(description: "upstream said: gateway timeout")).failureClass == .network)
        #expect(HTTPFetcher.classify(Worded(description: "timed out")).failureClass == .network)
    }

    @Test func theDocsNameEverySubcommandFlagAndExitCode() throws {
        // The commands and flags as swift-argument-parser knows them, against the pages
        // where they are documented: a section per command in docs/commands.md, the exit
        // codes' table in docs/guide.md.
        let commands = try Fixtures.page("docs/commands.md"), guide = try Fixtures.page("docs/guide.md")
        let readme = commands + guide
        let dump = try CLITests.run(["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let subcommands = try #require((root["command"] as? [String: Any])?["subcommands"] as? [[String: Any]])
        var checked = 0
        for subcommand in subcommands {
            guard let name = subcommand["commandName"] as? String, name != "help" else { continue }
            #expect(commands.contains("\n## `avatar-cache \(name)"), "docs/commands.md has a section for \(name)")
            for argument in subcommand["arguments"] as? [[String: Any]] ?? [] {
                for flag in argument["names"] as? [[String: Any]] ?? [] where flag["kind"] as? String == "long" {
                    guard let long = flag["name"] as? String, !["help", "version"].contains(long) else { continue }
                    // The flag itself, not a longer one it begins (--max-ttl-hours in --max-ttl-hours-x).
                    #expect(readme.range(of: "--\(long)(?![a-z-])", options: .regularExpression) != nil, "the docs name --\(long) of \(name)")
                    checked += 1
                }
            }
        }
        #expect(checked > 60)
        // Every exit code the tool uses has a row in the table.
        for code in [0, 3, 4, 64, 65, 66, 70, 73, 74, 75] {
            #expect(guide.contains("| \(code) |"), "exit code \(code) is in docs/guide.md")
        }
    }

    @Test func theInstallPutsTheBinaryAndItsCompletionsUnderThePrefix() throws {
        let prefix = try Fixtures.temporaryDirectory("install")
        defer { try? FileManager.default.removeItem(at: prefix) }
        // The built binary (the release build is scripts/install's own; the rest is this).
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Fixtures.repositoryRoot.appendingPathComponent("scripts/install").path,
                             "--prefix", prefix.path, "--binary", CLITests.binary.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        let installed = prefix.appendingPathComponent("bin/avatar-cache").path
        #expect(FileManager.default.isExecutableFile(atPath: installed))
        let version = try CLITests.run(["--version"], executable: URL(fileURLWithPath: installed))
        #expect(version.status == 0 && version.stdout.contains(AvatarCacheVersion.string), "\(version)")
        for (path, marker) in [("share/bash-completion/completions/avatar-cache", "complete"),
                               ("share/zsh/site-functions/_avatar-cache", "#compdef avatar-cache"),
                               ("share/fish/vendor_completions.d/avatar-cache.fish", "complete -c")] {
            let text = try String(contentsOf: prefix.appendingPathComponent(path), encoding: .utf8)
            #expect(text.contains(marker) && text.contains("merge") && text.contains("shard"), "\(path)")
        }
        #expect(output.contains("is not on PATH"), "a prefix off PATH is pointed out: \(output)")
    }
}
