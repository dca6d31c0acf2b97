import ArgumentParser
import Foundation
import Testing
import AvatarCacheLookup
@testable import AvatarCacheLookupCommand
import AvatarCacheTestKit

/// `avatar-cache lookup` as the front binary runs it: its arguments (the common forms read
/// without swift-argument-parser, everything else through it, to the same request), what
/// it refuses, and its exit codes over a real cache.
@Suite struct LookupCommandTests {
    /// A request's fields, to compare two.
    func fields(_ request: Lookup.Request) -> String {
        "\(request.cache)|\(request.user ?? "-")|\(request.url ?? "-")|\(request.size)|\(request.scale)|\(request.json)|\(request.repeatCount)|\(request.logLevel ?? "-")"
    }

    @Test func theCommonFormsAreReadAsSwiftArgumentParserReadsThem() throws {
        let forms: [[String]] = [
            ["--cache", "/var/c", "--user", "u42"],
            ["--cache=/var/c", "--user=u42", "--size=20", "--scale=2", "--json"],
            ["--json", "--url", "https://photos.example.com/a.jpg", "--cache", "/var/c", "--size", "150.5"],
            ["--cache", "/var/c", "--user", "u 42", "--repeat-count", "10", "--scale", "8"],
            ["--log-level", "debug", "--cache", "/var/c", "--user", "u42"], ["--cache=/var/c", "--url=https://a/b.jpg", "--log-level=error"],
        ]
        for arguments in forms {
            let fast = try #require(Lookup.Request.parseCommonForm(arguments), "\(arguments)")
            let parsed = try Lookup.parse(arguments).request
            #expect(fields(fast) == fields(parsed), "\(arguments)")
        }
        let request = try #require(Lookup.Request.parseCommonForm(["--cache", "/var/c", "--user", "u42"]))
        #expect(request.size == 55 && request.scale == 3 && !request.json && request.repeatCount == 0, "the defaults")
    }

    /// Anything else is left to swift-argument-parser (help, mistakes, a repeated option),
    /// which answers it in its own words.
    @Test func anythingElseIsLeftToSwiftArgumentParser() {
        let others: [[String]] = [
            ["--help"], ["-h"], ["--cache", "/c"], ["--user", "u"], ["--cache", "/c", "--user", "u", "--url", "x"],
            ["--cache", "/c", "--user", "u", "--user", "v"], ["--cache", "/c", "--user", "u", "--json", "--json"],
            ["--cache", "/c", "--user"], ["--cache", "/c", "--user", "-u"], ["--cache", "/c", "--user", ""],
            ["--cache", "/c", "--user", "u", "--size", "big"], ["--cache", "/c", "--user", "u", "--scale", "9"],
            ["--cache", "/c", "--user", "u", "--size", "0"], ["--cache", "/c", "--user", "u", "--colour", "red"],
            ["lookup", "--cache", "/c", "--user", "u"], ["--cache", "/c", "--user", "u", "--json=yes"],
            ["--cache", "/c", "--user", "u", "--repeat-count", "2000000"],
            ["--cache", "/c", "--user", "u", "--log-level", "loud"], ["--cache", "/c", "--user", "u", "--log-level", "info", "--log-level", "debug"],
        ]
        for arguments in others {
            #expect(Lookup.Request.parseCommonForm(arguments) == nil, "\(arguments)")
        }
    }

    /// `--log-level`: a message is said at the level given or a more verbose one; the
    /// default is `info` (merge's and verify's `warning`, which they pass).
    @Test func theLogLevelSaysWhatIsLogged() {
        #expect(LogLevelOption.logs("debug", given: "debug") && LogLevelOption.logs("error", given: "debug"))
        #expect(!LogLevelOption.logs("debug", given: nil) && LogLevelOption.logs("info", given: nil))
        #expect(!LogLevelOption.logs("info", given: nil, default: LogLevelOption.quietDefaultLevel))
        #expect(LogLevelOption.logs("debug", given: " TRACE "))
        #expect(!LogLevelOption.logs("warning", given: "critical"))
    }

    @Test func whatValidationRefusesInItsWords() {
        func refusal(_ arguments: [String]) -> String? {
            do { _ = try Lookup.parse(arguments); return nil } catch { return Lookup.message(for: error) }
        }
        #expect(refusal(["--cache", "/c"]) == "give exactly one of --user and --url")
        #expect(refusal(["--cache", "/c", "--user", "u", "--url", "https://a/b.jpg"]) == "give exactly one of --user and --url")
        #expect(refusal(["--cache", "/c", "--user", "u", "--size", "0"]) == "--size must be a number of points above 0 (got 0)")
        #expect(refusal(["--cache", "/c", "--user", "u", "--size", "100001"]) == "--size must be at most 100000 points (got 100001)")
        #expect(refusal(["--cache", "/c", "--user", "u", "--scale", "0"]) == "--scale must be a number of pixels per point from 0.5 to 8 (got 0)")
        #expect(refusal(["--cache", "/c", "--user", "u", "--scale", "9"]) == "--scale must be a number of pixels per point from 0.5 to 8 (got 9)")
        #expect(refusal(["--cache", "/c", "--user", "u", "--scale", "2.625"]) == nil, "any density")
        #expect(refusal(["--cache", "/c", "--user", "u", "--log-level", "loud"])
                == "--log-level: expected one of trace, debug, info, notice, warning, error, critical, found \"loud\"")
        #expect(refusal(["--cache", "/c", "--user", "u", "--log-level", "Debug"]) == nil, "a level in any case, as the engine reads it")
        #expect(refusal(["--cache", "/c", "--user", "u", "--repeat-count=-1"]) == "--repeat-count must be between 0 and 1000000")
        #expect(refusal(["--cache", "/c", "--user", "u"]) == nil)
        #expect(refusal(["--user", "u"])?.contains("--cache") == true, "the missing option named")
    }

    @Test func theExitCodes() {
        #expect(Lookup.exitCode(for: LookupError.notFound(.user(id: "u"))) == Lookup.notInCache)
        #expect(Lookup.notInCache.rawValue == 66 && Lookup.cacheUnusable.rawValue == 73)
        #expect(Lookup.exitCode(for: LookupError.invalidArgument("x")).rawValue == 64)
        let directory = URL(fileURLWithPath: "/nowhere")
        for error in [LookupError.notACache(directory: directory), .needsUpgrade(directory: directory, reason: "r"),
                      .damagedIndex(file: directory, reason: "r")] {
            #expect(Lookup.exitCode(for: error) == Lookup.cacheUnusable, "\(error)")
        }
        #expect(Lookup.isNotInCache(LookupError.notFound(.user(id: "x"))) && !Lookup.isNotInCache(LookupError.invalidArgument("x")))
    }

    /// Run over a real cache: an answer (counted as an access for the prune), a user or a
    /// URL not in it (66), a directory that is no cache (73), and one written before the
    /// index (left to the engine to import).
    @Test func runOverARealCache() throws {
        let scratch = try Fixtures.temporaryDirectory("lookup-command")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cache = scratch.appendingPathComponent("cache")
        let index = try LookupIndex(in: cache)
        defer { index.close() }
        let url = "https://photos.example.com/pat.jpg"
        try index.addProfile(id: "pat", displayName: "Pat Doe", initials: "PD", color: "#007AFF", photoSource: url)
        try index.addEntry(key: url, kind: "photo", tiers: [330: 330, 900: 900])
        func exitCode(_ arguments: [String]) -> Int32? {
            do {
                try #require(Lookup.Request.parseCommonForm(arguments)).run()
                return nil
            } catch let code as ExitCode {
                return code.rawValue
            } catch {
                Issue.record("\(arguments): \(error)")
                return -1
            }
        }

        #expect(exitCode(["--cache", cache.path, "--user", "pat", "--json"]) == nil)
        // The lookup is an access, recorded before the command ends: in the cache's access
        // journal (a line, no transaction), which the next writer folds into the index.
        let journal = (try? String(contentsOf: cache.appendingPathComponent("access-journal"), encoding: .utf8)) ?? ""
        #expect(journal.hasSuffix("\t\(url)\n"), "the lookup is an access, recorded before the command ends: \(journal)")
        #expect(exitCode(["--cache", cache.path, "--url", url, "--size", "150"]) == nil)
        #expect(exitCode(["--cache", cache.path, "--user", "nobody"]) == 66)
        #expect(exitCode(["--cache", cache.path, "--url", "https://photos.example.com/other.jpg"]) == 66)
        #expect(exitCode(["--cache", scratch.appendingPathComponent("absent").path, "--user", "pat"]) == 73)

        let older = scratch.appendingPathComponent("older")
        try FileManager.default.createDirectory(at: older, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: older.appendingPathComponent("metadata.json"))
        #expect(Lookup.needsImport(older) && !Lookup.needsImport(cache))
        #expect(exitCode(["--cache", older.path, "--user", "pat"]) == 73, "the front binary hands it to the engine")
    }
}
