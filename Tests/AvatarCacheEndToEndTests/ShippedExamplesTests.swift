import Foundation
import Testing
@testable import AvatarCacheSupport
import AvatarCacheTestKit
import AvatarCacheTestSupport
import Yams

/// Every example the repository ships is run as written, with only the exports and the
/// cache pointed at the samples served on loopback (and private networks allowed for
/// that): the crontab line with the pipeline the package installs, every pipeline file,
/// the CI action's run step, the GitHub Actions matrix and the Kubernetes Jobs' commands.
@Suite(.serialized) struct ShippedExamplesTests {
    /// The samples served on loopback, laid out as samples/ is (monica/, jami/).
    final class ServedSamples {
        let samples: SampleExports
        let exports: URL
        let work: URL
        var port: Int { samples.server.port }
        var binDirectory: String { Binary.url.deletingLastPathComponent().path }

        init(_ label: String) throws {
            samples = try SampleExports(label: label)
            exports = samples.directory.appendingPathComponent("exports")
            work = samples.directory.appendingPathComponent("work")
            let manager = FileManager.default
            try manager.createDirectory(at: exports.appendingPathComponent("monica"), withIntermediateDirectories: true)
            try manager.createDirectory(at: work, withIntermediateDirectories: true)
            for path in samples.exports where path.hasSuffix(".json") {
                let name = URL(fileURLWithPath: path).lastPathComponent.replacingOccurrences(of: "monica-", with: "monica/")
                try manager.copyItem(atPath: path, toPath: exports.appendingPathComponent(name).path)
            }
            try manager.copyItem(at: Fixtures.repositoryRoot.appendingPathComponent("samples/jami"), to: exports.appendingPathComponent("jami"))
        }

        /// What a user sets for the loopback samples, on top of what the example says.
        var loopbackEnvironment: [String: String] {
            ["AVATAR_CACHE_INPUTS": exports.path, "AVATAR_CACHE_ALLOW_PRIVATE": "true",
             "PATH": binDirectory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        }

        /// Monica's host (the samples' Monica photos are on "localhost") and its token, for
        /// the examples that read Monica exports.
        var monica: [String: String] { ["MONICA_HOST": "localhost:\(port)", "AVATAR_CACHE_MONICA_TOKEN": "test-token"] }

        /// Runs a shell command in the work folder, avatar-cache on PATH.
        func shell(_ command: String, environment: [String: String] = [:]) throws -> Binary.Result {
            try Binary.run(["-c", "set -eo pipefail\ncd \(work.path)\n" + command],
                             environment: loopbackEnvironment.merging(environment) { $1 },
                             executable: URL(fileURLWithPath: "/bin/bash"))
        }

        func verify(_ cache: String) throws -> Binary.Result {
            try Binary.run(["verify", "--cache", cache.hasPrefix("/") ? cache : work.appendingPathComponent(cache).path, "--budget", "10GB"])
        }
    }

    func text(_ path: String) throws -> String {
        try String(contentsOf: Fixtures.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func theCrontabLineRunsAsWrittenOnAHostWithoutNodeExporter() throws {
        let served = try ServedSamples("crontab")
        let crontab = try text("pipelines/examples/avatar-cache.crontab")
        var environment: [String: String] = [:]
        var job: String?
        for line in crontab.split(separator: "\n").map(String.init) where !line.hasPrefix("#") {
            if let equals = line.firstIndex(of: "="), !line.prefix(upTo: equals).contains(" ") {
                environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                job = line
            }
        }
        // Five time fields and the user (/etc/cron.d), then the command.
        let fields = try #require(job).split(separator: " ", maxSplits: 6).map(String.init)
        #expect(fields.count == 7 && fields[5] == "avatar-cache", "a /etc/cron.d line run as the package's user")
        let cache = served.work.appendingPathComponent("cron-cache").path
        #expect(environment["AVATAR_CACHE_DIR"] == "/var/lib/avatar-cache" && environment["AVATAR_CACHE_INPUTS"] != nil)
        environment["AVATAR_CACHE_DIR"] = cache
        environment["AVATAR_CACHE_INPUTS"] = served.exports.path
        // The paths the package installs, in the repository.
        let command = fields[6]
            .replacingOccurrences(of: "/usr/bin/avatar-cache", with: Binary.url.path)
            .replacingOccurrences(of: "/etc/avatar-cache/prefetch.yml", with: Fixtures.repositoryRoot.appendingPathComponent("pipelines/prefetch.yml").path)
            .replacingOccurrences(of: "| logger -t avatar-cache", with: "| cat")
        let result = try served.shell(command, environment: environment.merging(served.monica) { $1 })
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("{\"level\":") && result.stdout.contains(" downloaded"), "JSON log lines and the summary: \(result.stdout.prefix(400))")
        #expect(try served.verify(cache).status == 0)
    }

    @Test(arguments: ["prefetch", "warmup", "ci"])
    func everyPipelineFileRunsAsWritten(_ name: String) throws {
        let served = try ServedSamples("pipeline-\(name)")
        let cache = served.work.appendingPathComponent("cache").path
        let report = served.work.appendingPathComponent("report.json").path
        let result = try served.shell("avatar-cache run \(Fixtures.repositoryRoot.appendingPathComponent("pipelines/\(name).yml").path)",
                                      environment: ["AVATAR_CACHE_DIR": cache, "AVATAR_CACHE_REPORT": report].merging(served.monica) { $1 })
        #expect(result.status == 0, "\(name): \(result.stdout.suffix(600))\n\(result.stderr.suffix(600))")
        #expect(try served.verify(cache).status == 0, "\(name): verify")
        if name != "prefetch" { #expect(FileManager.default.fileExists(atPath: report), "\(name) writes its report") }
    }

    /// action.yml, as a mapping.
    func action() throws -> [String: Any] {
        try #require(try Yams.load(yaml: text("action.yml")) as? [String: Any])
    }

    /// The long flags of a subcommand, from swift-argument-parser's help dump: name -> takes a value.
    func flags(of subcommand: String) throws -> [String: Bool] {
        let dump = try Binary.run([subcommand, "--experimental-dump-help"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var result: [String: Bool] = [:]
        for argument in (json["command"] as? [String: Any])?["arguments"] as? [[String: Any]] ?? [] {
            for name in argument["names"] as? [[String: Any]] ?? [] where name["kind"] as? String == "long" {
                result[name["name"] as! String] = argument["kind"] as? String != "flag"
            }
        }
        return result
    }

    @Test func theActionsInputsAreTheCLIsFlags() throws {
        let action = try action()
        let inputs = try #require(action["inputs"] as? [String: [String: Any]])
        let steps = try #require((action["runs"] as? [String: Any])?["steps"] as? [[String: Any]])
        let run = try #require(steps.first { $0["id"] as? String == "run" })
        let env = try #require(run["env"] as? [String: String])
        let warm = try flags(of: "warm"), runFlags = try flags(of: "run")
        let ownInputs: Set = ["deb", "command", "pipeline", "exports", "args", "monica-token"]
        var flagInputs = 0
        for (name, input) in inputs where !ownInputs.contains(name) {
            let variable = "FLAG_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
            #expect(env[variable] == "${{ inputs.\(name) }}", "input \(name) reaches the CLI as \(variable)")
            let takesValue = try #require(warm[name] as Bool?, "input \(name) is a flag of avatar-cache warm")
            #expect(runFlags[name] != nil || name == "cache", "input \(name) is a flag of avatar-cache run")
            let isSwitch = ["true", "false"].contains(input["default"] as? String ?? "")
            #expect(takesValue != isSwitch, "input \(name): a switch exactly when the flag takes no value")
            flagInputs += 1
        }
        #expect(flagInputs >= 8)
        // And nothing reaches the CLI that is not an input.
        for variable in env.keys where variable.hasPrefix("FLAG_") {
            let name = variable.dropFirst(5).lowercased().replacingOccurrences(of: "_", with: "-")
            #expect(inputs[name] != nil, "\(variable) comes from an input")
        }
    }

    @Test func theActionsRunStepWarmsAndWritesTheStepSummary() throws {
        let served = try ServedSamples("action")
        let action = try action()
        let inputs = try #require(action["inputs"] as? [String: [String: Any]])
        let steps = try #require((action["runs"] as? [String: Any])?["steps"] as? [[String: Any]])
        let step = try #require(steps.first { $0["id"] as? String == "run" })
        let script = try #require(step["run"] as? String)
        // The workflow's `with:` (the loopback samples), then GitHub's substitution of ${{ inputs.x }}.
        var given = inputs.mapValues { $0["default"] as? String ?? "" }
        given.merge(["exports": "\(served.exports.path)/nexus-*.json \(served.exports.path)/monica/contacts-page-*.json \(served.exports.path)/jami",
                     "cache": "ci-cache", "report": "ci-report.json", "max-failure-rate": "0.2",
                     "allow-private-networks": "true", "monica-host": "localhost:\(served.port)", "monica-token": "test-token",
                     "args": "--size 110 --size 300"]) { $1 }
        var environment: [String: String] = [:]
        for (variable, value) in try #require(step["env"] as? [String: String]) {
            let name = value.replacingOccurrences(of: "${{ inputs.", with: "").replacingOccurrences(of: " }}", with: "")
            environment[variable] = given[name] ?? ""
        }
        let summary = served.work.appendingPathComponent("step-summary.md").path
        environment["GITHUB_STEP_SUMMARY"] = summary
        let result = try served.shell(script, environment: environment)
        #expect(result.status == 0, "\(result.stdout.suffix(800))\n\(result.stderr.suffix(800))")
        #expect(result.stdout.contains("--monica-token-env AVATAR_CACHE_MONICA_TOKEN") && !result.stdout.contains("test-token"),
                "the token goes by environment, never on the command line: \(result.stdout.prefix(400))")
        #expect(try served.verify("ci-cache").status == 0)
        let markdown = try String(contentsOfFile: summary, encoding: .utf8)
        #expect(markdown.contains("avatar-cache") && markdown.contains("|"), "\(markdown)")
        let report = try String(contentsOf: served.work.appendingPathComponent("ci-report.json"), encoding: .utf8)
        #expect(report.contains("\"version\" : \"\(AvatarCacheVersion.string)\""), "the report names the version: \(report.prefix(300))")
        // Tiers 330 and 900 px: --size 110 and 300 from `args` reached the CLI.
        let lookup = try Binary.run(["lookup", "--cache", served.work.appendingPathComponent("ci-cache").path, "--user", "u1001", "--size", "150", "--json"])
        #expect(lookup.stdout.contains("\"tier\" : 900"), "\(lookup.stdout)")
    }

    @Test func theGitHubActionsMatrixRunsAsWritten() throws {
        let served = try ServedSamples("matrix")
        let workflow = try #require(try Yams.load(yaml: text("deploy/github-actions/avatar-cache-sharded.yml")) as? [String: Any])
        let jobs = try #require(workflow["jobs"] as? [String: [String: Any]])
        let warm = try #require(jobs["warm"]), merge = try #require(jobs["merge"])
        #expect((warm["container"] as? [String: Any])?["image"] as? String == "${{ vars.AVATAR_CACHE_IMAGE }}", "the image, by its variable")
        #expect((merge["container"] as? [String: Any])?["image"] as? String == "${{ vars.AVATAR_CACHE_IMAGE }}")
        let shards = try #require(((warm["strategy"] as? [String: Any])?["matrix"] as? [String: Any])?["shard"] as? [Int])
        let warmRun = try #require((warm["steps"] as? [[String: Any]])?.compactMap { $0["run"] as? String }.first)
        for shard in shards {
            let command = warmRun.replacingOccurrences(of: "${{ matrix.shard }}", with: "\(shard)")
                .replacingOccurrences(of: "exports/users.json", with: "\(served.exports.path)/nexus-users.json")
                .replacingOccurrences(of: "exports/conversations.json", with: "\(served.exports.path)/nexus-conversations.json")
            // The samples hold two sources broken on purpose (a 404, a text file), which is
            // more than 20 % of a shard's few: the rate is the one thing relaxed here.
            let result = try served.shell(command + " --allow-private-networks --max-failure-rate 1")
            #expect(result.status == 0, "shard \(shard): \(result.stderr.suffix(600))")
            // upload-artifact then download-artifact with its pattern: shards/<artifact name>/.
            let destination = served.work.appendingPathComponent("shards/avatar-cache-shard-\(shard)")
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: served.work.appendingPathComponent("shard-\(shard)"), to: destination)
        }
        for run in (merge["steps"] as? [[String: Any]] ?? []).compactMap({ $0["run"] as? String }) {
            let result = try served.shell(run)
            #expect(result.status == 0, "\(run): \(result.stdout.suffix(300)) \(result.stderr.suffix(600))")
        }
        #expect(try served.verify("avatar-cache").status == 0)
    }

    @Test func theKubernetesJobsRunAsWrittenWithTheImageNamedOnce() throws {
        let served = try ServedSamples("kubernetes")
        func documents(_ path: String) throws -> [[String: Any]] {
            try Yams.load_all(yaml: text("deploy/kubernetes/\(path)")).compactMap { $0 as? [String: Any] }
        }
        // The image: `avatar-cache` in every manifest, its registry name in one component.
        let component = try #require(try documents("image/kustomization.yaml").first)
        #expect(component["kind"] as? String == "Component")
        let images = try #require(component["images"] as? [[String: Any]])
        #expect(images.count == 1 && images[0]["name"] as? String == "avatar-cache")
        for step in ["warm", "merge"] {
            let kustomization = try #require(try documents("\(step)/kustomization.yaml").first)
            #expect((kustomization["components"] as? [String]) == ["../image"], "\(step) takes the image from the component")
        }
        let warmDocuments = try documents("warm/warm-indexed-job.yaml")
        let mergeDocuments = try documents("merge/merge-job.yaml")
        func container(_ documents: [[String: Any]]) throws -> [String: Any] {
            let job = try #require(documents.first { $0["kind"] as? String == "Job" })
            let spec = try #require(((job["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
            #expect((spec["securityContext"] as? [String: Any])?["runAsUser"] as? Int == 10001, "the image's user")
            return try #require((spec["containers"] as? [[String: Any]])?.first)
        }
        let warm = try container(warmDocuments), merge = try container(mergeDocuments)
        #expect(warm["image"] as? String == "avatar-cache" && merge["image"] as? String == "avatar-cache")
        let containerfile = try text("Containerfile")
        #expect(containerfile.contains("USER 10001:10001") && containerfile.contains("FROM debian:bookworm-slim"))

        // The warm Job's pods, one per completion index, then the merge Job, as written:
        // the ConfigMap's pipeline at /config, the exports at /exports, the volumes in a folder.
        let configMap = try #require(warmDocuments.first { $0["kind"] as? String == "ConfigMap" })
        let pipeline = try #require((configMap["data"] as? [String: String])?["warm.yml"])
            .replacingOccurrences(of: "/exports/users.json", with: "\(served.exports.path)/nexus-users.json")
            .replacingOccurrences(of: "/exports/conversations.json", with: "\(served.exports.path)/nexus-conversations.json")
            + "allow-private-networks: true\n"
        let config = served.work.appendingPathComponent("warm.yml")
        try Data(pipeline.utf8).write(to: config)
        let job = try #require(warmDocuments.first { $0["kind"] as? String == "Job" })
        let completions = try #require((job["spec"] as? [String: Any])?["completions"] as? Int)
        let data = served.work.appendingPathComponent("data")
        let warmCommand = try #require((warm["args"] as? [String])?.first)
            .replacingOccurrences(of: "/config/warm.yml", with: config.path)
        for index in 0..<completions {
            let shard = data.appendingPathComponent("shards/\(index)")   // subPathExpr: shards/$(SHARD_INDEX)
            try FileManager.default.createDirectory(at: shard, withIntermediateDirectories: true)
            let command = warmCommand.replacingOccurrences(of: "/shard", with: shard.path)
            let result = try served.shell(command, environment: ["SHARD_INDEX": "\(index)", "SHARDS": "\(completions)"])
            #expect(result.status == 0, "pod \(index): \(result.stderr.suffix(600))")
        }
        let mergeCommand = try #require((merge["args"] as? [String])?.first).replacingOccurrences(of: "/data", with: data.path)
        let result = try served.shell(mergeCommand)
        #expect(result.status == 0, "\(result.stdout.suffix(300)) \(result.stderr.suffix(600))")
        #expect(result.stdout.contains(": ok"), "merge then verify: \(result.stdout)")
    }

    @Test func theVersionIsWrittenOnceAndCarriesTheCommit() throws {
        let version = try Binary.run(["--version"])
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == AvatarCacheVersion.string)
        // The front answers it (without starting the engine), in the engine's words.
        let engine = Binary.url.deletingLastPathComponent().appendingPathComponent("avatar-cache-engine")
        #expect(try Binary.run(["--version"], executable: engine).stdout == version.stdout)
        #expect(AvatarCacheVersion.string.hasPrefix(AvatarCacheVersion.number))
        // scripts/test (like every script that builds) stamps the build with the commit.
        if let commit = ProcessInfo.processInfo.environment["AVATAR_CACHE_COMMIT"], !commit.isEmpty {
            #expect(AvatarCacheVersion.string == "\(AvatarCacheVersion.number)+g\(commit)")
        } else {
            #expect(AvatarCacheVersion.commit == nil && AvatarCacheVersion.string == AvatarCacheVersion.number)
        }
    }
}
