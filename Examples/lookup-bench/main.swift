// The lookup library timed as an app or a server uses it (scripts/bench-lookup): one
// CacheLookup shared by THREADS threads (the synchronous answer), or by TASKS tasks (the
// `async` answer, as a server's routes call it), each answering users drawn at random
// from a file of ids, every lookup timed on its own, for SECONDS seconds; then the
// percentiles. Built against AvatarCacheLookup alone, as lookup-route is.
//
//   lookup-bench --cache DIR --ids FILE [--seconds 10] [--threads 1 | --tasks N] [--no-record]
import AvatarCacheLookup
import Foundation
import Synchronization

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

guard let cache = option("cache"), let idsPath = option("ids"),
      let ids = try? String(contentsOfFile: idsPath, encoding: .utf8).split(separator: "\n").map(String.init), !ids.isEmpty else {
    FileHandle.standardError.write(Data("usage: lookup-bench --cache DIR --ids FILE [--seconds 10] [--threads 1 | --tasks N] [--no-record]\n".utf8))
    exit(64)
}
let seconds = Double(option("seconds") ?? "10") ?? 10
let threads = Int(option("threads") ?? "1") ?? 1
let tasks = option("tasks").flatMap { Int($0) }
let lookup = try CacheLookup(cache: URL(fileURLWithPath: cache), recordsAccess: !CommandLine.arguments.contains("--no-record"))

struct Samples {
    var nanoseconds: [UInt64] = []
    var failures = 0
}
let samples = Mutex(Samples())
let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
let group = DispatchGroup()
if let tasks {
    // The async answers, from `tasks` tasks on the concurrency pool (detached: the main
    // thread waits below, and top-level code is the main actor's).
    group.enter()
    Task.detached {
        await withTaskGroup(of: ([UInt64], Int).self) { running in
            for _ in 0..<tasks {
                running.addTask {
                    var generator = SystemRandomNumberGenerator()
                    var mine: [UInt64] = []
                    mine.reserveCapacity(1 << 20)
                    var failures = 0
                    while DispatchTime.now().uptimeNanoseconds < deadline {
                        let id = ids[Int.random(in: 0..<ids.count, using: &generator)]
                        let start = DispatchTime.now().uptimeNanoseconds
                        do {
                            _ = try await lookup.answer(forUser: id, viewSize: 55, scale: 3)
                        } catch {
                            failures += 1
                        }
                        mine.append(DispatchTime.now().uptimeNanoseconds - start)
                    }
                    return (mine, failures)
                }
            }
            for await (mine, failures) in running {
                samples.withLock { samples in
                    samples.nanoseconds += mine
                    samples.failures += failures
                }
            }
        }
        group.leave()
    }
}
for thread in 0..<(tasks == nil ? threads : 0) {
    group.enter()
    Thread.detachNewThread {
        var generator = SystemRandomNumberGenerator()
        var mine: [UInt64] = []
        mine.reserveCapacity(1 << 20)
        var failures = 0
        _ = thread
        while DispatchTime.now().uptimeNanoseconds < deadline {
            let id = ids[Int.random(in: 0..<ids.count, using: &generator)]
            let start = DispatchTime.now().uptimeNanoseconds
            do {
                _ = try lookup.blocking.answer(forUser: id, viewSize: 55, scale: 3)
            } catch {
                failures += 1
            }
            mine.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        samples.withLock { samples in
            samples.nanoseconds += mine
            samples.failures += failures
        }
        group.leave()
    }
}
group.wait()
let (sorted, failures) = samples.withLock { ($0.nanoseconds.sorted(), $0.failures) }
func percentile(_ p: Double) -> Double { Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000 }
let who = tasks.map { "\($0) tasks" } ?? "\(threads) threads"
print("\(sorted.count) lookups (\(who), " + String(format: "%.0f s, %d failed): p50 %.1f µs, p90 %.1f µs, p99 %.1f µs, p99.9 %.1f µs, slowest %.1f µs",
             seconds, failures, percentile(0.5), percentile(0.9), percentile(0.99), percentile(0.999),
             Double(sorted.last ?? 0) / 1000))
lookup.blocking.flush()
