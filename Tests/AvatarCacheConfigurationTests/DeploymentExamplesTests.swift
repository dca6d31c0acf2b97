import Foundation
import Testing
@testable import AvatarCacheConfiguration
@testable import AvatarCacheSupport
import AvatarCacheTestKit
import Yams

/// The deployment examples in deploy/ load as YAML and carry the keys that make a split
/// run work: every shard index given to `--shard` with the right count, each shard its
/// own cache, and a merge that takes every shard.
@Suite struct DeploymentExamplesTests {
    func load(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("deploy/\(path)"), encoding: .utf8)
        return try Yams.load_all(yaml: text).map { try #require($0 as? [String: Any], "\(path): a document is a mapping") }
    }

    func value(_ object: Any?, _ path: String) -> Any? {
        var current = object
        for key in path.split(separator: ".") {
            if let index = Int(key), let array = current as? [Any] {
                current = index < array.count ? array[index] : nil
            } else {
                current = (current as? [String: Any])?[String(key)]
            }
        }
        return current
    }

    /// What `avatar-cache` would parse from a container's shell command: the words after
    /// the binary's name.
    func words(_ command: String) -> [String] {
        command.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
    }

    @Test func theKubernetesIndexedJobGivesEachPodItsShardAndItsOwnCache() throws {
        let documents = try load("kubernetes/warm/warm-indexed-job.yaml")
        let job = try #require(documents.first { $0["kind"] as? String == "Job" })
        let spec = try #require(job["spec"] as? [String: Any])
        #expect(spec["completionMode"] as? String == "Indexed")
        let completions = try #require(spec["completions"] as? Int)
        #expect(spec["parallelism"] as? Int == completions)
        #expect(value(spec, "template.spec.restartPolicy") as? String == "Never")
        let container = try #require(value(spec, "template.spec.containers.0") as? [String: Any])
        let env = try #require(container["env"] as? [[String: Any]])
        let shards = try #require(env.first { $0["name"] as? String == "SHARDS" })
        #expect(shards["value"] as? String == String(completions), "SHARDS equals completions")
        let index = try #require(env.first { $0["name"] as? String == "SHARD_INDEX" })
        #expect(value(index, "valueFrom.fieldRef.fieldPath") as? String == "metadata.annotations['batch.kubernetes.io/job-completion-index']")
        let command = try #require((container["args"] as? [String])?.first)
        let argv = words(command)
        let shardFlag = try #require(argv.firstIndex(of: "--shard"))
        #expect(argv[shardFlag + 1] == "$SHARD_INDEX/$SHARDS")
        #expect(argv.contains("avatar-cache") && (argv.contains("run") || argv.contains("warm")))
        // The shard value the pod's shell makes parses as a shard.
        for i in 0..<completions {
            #expect(try Shard(parsing: argv[shardFlag + 1].replacingOccurrences(of: "$SHARD_INDEX", with: "\(i)")
                .replacingOccurrences(of: "$SHARDS", with: "\(completions)")) == Shard(index: i, count: completions))
        }
        // Its cache is its own directory of the shared volume.
        let cache = try #require(argv.firstIndex(of: "--cache").map { argv[$0 + 1] })
        let mounts = try #require(container["volumeMounts"] as? [[String: Any]])
        let own = try #require(mounts.first { $0["mountPath"] as? String == cache })
        #expect((own["subPathExpr"] as? String)?.contains("$(SHARD_INDEX)") == true)
        // The pipeline file it runs loads, with the shard left to the flag.
        let configMap = try #require(documents.first { $0["kind"] as? String == "ConfigMap" })
        let pipeline = try #require((configMap["data"] as? [String: Any])?["warm.yml"] as? String)
        let settings = try PipelineFile.parse(pipeline, file: "warm.yml", environment: [:])
        #expect(!settings.inputs.isEmpty && settings[Settings.shard] == nil)

        // The merge Job names every shard's directory once.
        let merge = try #require(try load("kubernetes/merge/merge-job.yaml").first { $0["kind"] as? String == "Job" })
        let mergeCommand = words(try #require((value(merge, "spec.template.spec.containers.0.args") as? [String])?.first))
        let start = try #require(mergeCommand.firstIndex(of: "merge"))
        let sources = mergeCommand[(start + 1)...].prefix { !$0.hasPrefix("--") }
        let sharedPrefix = "/data/" + (own["subPathExpr"] as! String).replacingOccurrences(of: "$(SHARD_INDEX)", with: "")
        #expect(Array(sources) == (0..<completions).map { "\(sharedPrefix)\($0)" })
        #expect(mergeCommand.contains("--into") && mergeCommand.contains("verify"))
        let mergeVolume = try #require(value(merge, "spec.template.spec.volumes.0.persistentVolumeClaim.claimName") as? String)
        #expect(mergeVolume == value(spec, "template.spec.volumes.0.persistentVolumeClaim.claimName") as? String,
                "the merge mounts the shards' volume (hard links, no copy)")
    }

    @Test func theGitHubActionsMatrixWarmsEveryShardAndMergesThemAll() throws {
        let workflow = try #require(try load("github-actions/avatar-cache-sharded.yml").first)
        let jobs = try #require(workflow["jobs"] as? [String: Any])
        let warm = try #require(jobs["warm"] as? [String: Any])
        let matrix = try #require(value(warm, "strategy.matrix.shard") as? [Int])
        #expect(matrix == Array(0..<matrix.count))
        let steps = try #require(warm["steps"] as? [[String: Any]])
        let run = try #require(steps.compactMap { $0["run"] as? String }.first { $0.contains("--shard") })
        // `${{ matrix.shard }}` is one word once GitHub has replaced it.
        let expression = "${{ matrix.shard }}"
        let argv = words(run.replacingOccurrences(of: expression, with: "{shard}"))
        let shard = try #require(argv.firstIndex(of: "--shard").map { argv[$0 + 1] })
        #expect(shard == "{shard}/\(matrix.count)", "the count is the matrix's size")
        for i in matrix { #expect(try Shard(parsing: shard.replacingOccurrences(of: "{shard}", with: "\(i)")) == Shard(index: i, count: matrix.count)) }
        let cache = try #require(argv.firstIndex(of: "--cache").map { argv[$0 + 1] })
        #expect(cache.contains("{shard}"), "each shard its own cache")
        let upload = try #require(steps.first { ($0["uses"] as? String)?.hasPrefix("actions/upload-artifact") == true })
        #expect((value(upload, "with.path") as? String)?.replacingOccurrences(of: expression, with: "{shard}") == cache)
        #expect(value(upload, "with.include-hidden-files") as? Bool == true, "the cache's lock and marker files are hidden")

        let merge = try #require(jobs["merge"] as? [String: Any])
        let needs = (merge["needs"] as? [String]) ?? [(merge["needs"] as? String) ?? ""]
        #expect(needs.contains("warm"))
        let mergeSteps = try #require(merge["steps"] as? [[String: Any]])
        let download = try #require(mergeSteps.first { value($0, "with.pattern") as? String != nil })
        let artifactName = try #require(value(upload, "with.name") as? String)
        let pattern = try #require(value(download, "with.pattern") as? String)
        #expect(artifactName.replacingOccurrences(of: expression, with: "*") == pattern)
        let mergeRun = try #require(mergeSteps.compactMap { $0["run"] as? String }.first { $0.contains(" merge ") })
        #expect(mergeRun.contains("\(value(download, "with.path") as? String ?? "?")/\(pattern)"), "merges every downloaded shard")
        #expect(mergeSteps.contains { ($0["run"] as? String)?.contains(" verify ") == true })
    }
}
