import Foundation
import Testing
@testable import AvatarCacheConfiguration
import AvatarCacheTestKit

/// Pipeline files: their keys, environment references, and flags over them.
@Suite struct PipelineFileTests {
    func parse(_ text: String, environment: [String: String] = [:]) throws -> PipelineSettings {
        try PipelineFile.parse(text, file: "test.yml", environment: environment)
    }

    /// The first mistake reported.
    func error(_ text: String) -> PipelineFile.Error? {
        do { _ = try parse(text); return nil } catch let error as PipelineFile.Error { return error } catch let errors as PipelineFile.Errors {
            return errors.errors.first
        } catch { return nil }
    }

    @Test func everyShippedPipelineParses() throws {
        for name in ["prefetch", "warmup", "ci"] {
            let path = Fixtures.repositoryRoot.appendingPathComponent("pipelines/\(name).yml").path
            let settings = try PipelineFile.load(path, environment: [:])
            #expect(!settings.inputs.isEmpty, "\(name) has inputs")
            #expect(settings[Settings.cache] != nil)
        }
    }

    @Test func valuesAndEnvironment() throws {
        let settings = try parse("""
            cache: ${DIR:-/tmp/c}
            inputs:
              - a.json
              - path: ${IN}/m/*.json
                format: monica
            budget: 50MB
            scales: [2, 3]
            ttl-hours: 1.5
            allow-private-networks: ${PRIVATE:-false}
            """, environment: ["IN": "/data", "PRIVATE": "true"])
        #expect(settings[Settings.cache] == "/tmp/c")
        #expect(settings.inputs == [PipelineInput(path: "a.json"), PipelineInput(path: "/data/m/*.json", format: .monica)])
        #expect(settings[Settings.budget] == 50_000_000 && settings[Settings.scales] == [2, 3] && settings[Settings.ttlHours] == 1.5)
        #expect(settings[Settings.allowPrivateNetworks] == true)
    }

    @Test func aWrongKeyNamesTheKeyAndLine() throws {
        let found = try #require(error("cache: /tmp/c\ninputs: [a.json]\nbudgett: 10MB\n"))
        #expect(found.line == 3 && found.key == "budgett")
        #expect(found.description.hasPrefix("test.yml:3: key \"budgett\": unknown key"))
    }

    @Test func aWrongTypeNamesTheKeyLineAndWhatWasExpected() throws {
        let scale = try #require(error("cache: /tmp/c\n\nscales: [3, three]\n"))
        #expect(scale.line == 3 && scale.key == "scales")
        #expect(scale.message.contains("expected a list of scales, found \"three\""))
        let budget = try #require(error("budget: lots\n"))
        #expect(budget.description == "test.yml:1: key \"budget\": expected a size like 100MB, found \"lots\"")
        let quality = try #require(error("quality: 101\n"))
        #expect(quality.message.contains("outside 1…100"))
        let crop = try #require(error("crop: diagonal\n"))
        #expect(crop.message == "expected one of centre, attention, found \"diagonal\"")
        let inputs = try #require(error("inputs:\n  - path: a.json\n    fromat: monica\n"))
        #expect(inputs.line == 3 && inputs.key == "inputs.fromat")
    }

    @Test func everyMistakeIsReportedAndAnUnknownKeyGetsTheNearestOne() throws {
        do {
            _ = try parse("cache: /tmp/c\nbudgett: 10MB\nquality: 101\ninputs: [a.json]\nconcurency: 4\nlog_level: debug\n")
            Issue.record("the mistakes were not found")
        } catch let errors as PipelineFile.Errors {
            #expect(errors.errors.map(\.line) == [2, 3, 5, 6], "\(errors)")
            #expect(errors.errors[0].message.contains("did you mean \"budget\"?"))
            #expect(errors.errors[2].message.contains("did you mean \"concurrency\"?"))
            #expect(errors.errors[3].message.contains("did you mean \"log-level\"?"))
            #expect(errors.description.hasPrefix("4 mistakes in test.yml:"))
        }
        #expect(error("cache: /tmp/c\nzzzz: 1\n")?.message.contains("did you mean") == false, "no suggestion when nothing is near")
    }

    @Test func flagsOverrideTheFile() throws {
        var file = try parse("cache: /a\ninputs: [x.json]\nbudget: 10MB\nttl-hours: 5\n")
        var flags = PipelineSettings()
        flags[Settings.budget] = 20_000_000
        file = file.overridden(by: flags)
        #expect(file[Settings.budget] == 20_000_000 && file[Settings.ttlHours] == 5 && file[Settings.cache] == "/a")
    }
}
