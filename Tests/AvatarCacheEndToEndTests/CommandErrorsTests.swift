import Foundation
import Testing
import AvatarCacheTestKit

/// Mistakes and failures an operator meets, each with its exit code and its words: found before
/// the cache is touched, an export that is not there or not an export, output files that
/// cannot be written, a lock held by another command.
@Suite(.serialized) struct CommandErrorsTests {
    @Test func aMissingExportLeavesNoTraceInANewCacheOrAGoodOne() throws {
        let directory = try Fixtures.temporaryDirectory("missing-export")
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("no-such-export.json").path
        // A new directory: not created.
        let fresh = directory.appendingPathComponent("fresh").path
        let first = try Binary.run(["warm", missing, "--cache", fresh])
        #expect(first.status == 65 && first.stderr.contains("no such file"), "\(first.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fresh), "no directory, lock or marker for a run that could not start")

        // A good cache: nothing changes, and verify does not think a run was killed.
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        #expect(try Binary.run(["warm", export, "--cache", cache]).status == 0)
        let before = try Fixtures.fileNames(in: URL(fileURLWithPath: cache))
        let garbage = directory.appendingPathComponent("garbage.txt").path
        try Data("not an export at all".utf8).write(to: URL(fileURLWithPath: garbage))
        for bad in [missing, garbage] {
            let result = try Binary.run(["warm", export, bad, "--cache", cache])
            #expect(result.status == 65, "\(bad): \(result.stderr)")
        }
        #expect(try Fixtures.fileNames(in: URL(fileURLWithPath: cache)) == before, "not a file added or removed")
        let verify = try Binary.run(["verify", "--cache", cache])
        #expect(verify.status == 0 && !verify.stdout.contains("killed"), "\(verify.stdout)")
    }

    @Test func outputFilesThatCannotBeWrittenHaveTheirOwnExitCode() throws {
        let directory = try Fixtures.temporaryDirectory("outputs")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        // A report in a directory that does not exist: found before the run (usage, 64).
        let early = try Binary.run(["warm", export, "--cache", cache, "--report", directory.appendingPathComponent("nope/report.json").path])
        #expect(early.status == 64 && early.stderr.contains("does not exist"), "\(early.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cache))
        let metricsIsADirectory = try Binary.run(["warm", export, "--cache", cache, "--metrics-file", directory.path])
        #expect(metricsIsADirectory.status == 64 && metricsIsADirectory.stderr.contains("is a directory"), "\(metricsIsADirectory.stderr)")

        // The step summary (an environment variable) is only found unwritable after the
        // run: exit 74, the other outputs written, the cache saved.
        let report = directory.appendingPathComponent("report.json").path
        let late = try Binary.run(["warm", export, "--cache", cache, "--report", report], environment: ["GITHUB_STEP_SUMMARY": directory.path])
        #expect(late.status == 74, "\(late.stderr)")
        #expect(late.stderr.contains("step summary") && late.stderr.contains("the cache saved"), "\(late.stderr)")
        #expect(FileManager.default.fileExists(atPath: report), "the report is written all the same")
        #expect(try Binary.run(["verify", "--cache", cache]).status == 0)
    }

    @Test func aBinaryFileGivenAsAnExportIsNotEchoed() throws {
        let directory = try Fixtures.temporaryDirectory("binary-export")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A binary file given as an export: its bytes are not echoed.
        let binary = directory.appendingPathComponent("photo.bin").path
        try Data([0x00, 0xFF, 0xD8, 0xFF, 0xE0, 0x01, 0x02, 0x1B, 0x5B, 0x32, 0x4A] + Array(repeating: 0x80, count: 64)).write(to: URL(fileURLWithPath: binary))
        let refused = try Binary.run(["warm", binary, "--cache", directory.appendingPathComponent("d").path])
        #expect(refused.status == 65 && refused.stderr.contains("it is not text"), "\(refused.stderr)")
        #expect(!refused.stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{FFFD}" || $0 == "\0" }, "no raw bytes on the terminal")
    }

    @Test func aGlobMatchingNothingIsAMissingExport() throws {
        let directory = try Fixtures.temporaryDirectory("empty-glob")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try Binary.run(["warm", directory.appendingPathComponent("exports-*.json").path, "--cache", directory.appendingPathComponent("c").path])
        #expect(result.status == 65 && result.stderr.contains("matches no file"), "\(result.status) \(result.stderr)")
        let missing = try Binary.run(["warm", directory.appendingPathComponent("exports.json").path, "--cache", directory.appendingPathComponent("c").path])
        #expect(missing.status == 65, "the same code as a missing file")
    }

    /// `--wait` is one declaration (WaitOption); merge says what it waits for there.
    @Test func pruneAndMergeEachExplainTheirOwnWait() throws {
        let prune = try Binary.run(["prune", "--help"]).stdout
        let merge = try Binary.run(["merge", "--help"]).stdout
        // The option's own help: from its line in OPTIONS to the next option.
        let pruneWait = prune.components(separatedBy: "\n  --wait <").dropFirst().joined().components(separatedBy: "\n  --").first ?? ""
        #expect(!pruneWait.isEmpty && !pruneWait.contains("merge") && !pruneWait.contains("each"), "\(prune)")
        #expect(merge.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains("each merged cache's lock"), "\(merge)")
    }
}
