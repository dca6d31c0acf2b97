import ArgumentParser
import AvatarCache
import Dispatch
import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What `warm` and `run` share: settings -> configuration -> a run with logging,
/// signals and progress -> summary, report, metrics, step summary -> exit code.
struct RunExecution {
    let settings: PipelineSettings

    func execute() async throws {
        ExitCodes.errorFormat = settings[Settings.logFormat] ?? Settings.logFormat.defaultValue
        let configuration: WarmConfiguration
        do {
            configuration = try settings.configuration()
            // Output files are checked before the run: a wrong path costs nothing.
            for (flag, path) in [("--report", settings[Settings.report]), ("--metrics-file", settings[Settings.metricsFile])] {
                if let path { try ReportOutputs.checkWritable(path, flag: flag) }
            }
        } catch {
            throw ExitCodes.fail(error)
        }
        let format = settings[Settings.logFormat] ?? Settings.logFormat.defaultValue
        let progress = format == .text && isatty(STDERR_FILENO) == 1 ? TerminalProgress() : nil
        let logger = Logging.make(format: format, level: settings[Settings.logLevel] ?? Settings.logLevel.defaultValue, progress: progress)

        let control = RunControl()
        let signals = SignalWatcher(control: control, logger: logger)
        defer { signals.cancel() }

        let report: RunReport
        do {
            report = try await WarmPipeline(configuration: configuration, logger: logger, control: control) { step in
                progress?.update(step)
            }.run()
        } catch {
            progress?.finish()
            throw ExitCodes.fail(error)
        }
        progress?.finish()

        var exitCode = ExitCodes.success
        let stated = report.inputCounts.reduce(0) { $0 + $1.stated }
        if let signal = signals.received {
            exitCode = ExitCode(128 + signal)
        } else if report.recordsLost > 0, Double(report.recordsLost) / Double(max(stated, 1)) > (settings[Settings.maxFailureRate] ?? 0) {
            // Records an input states and the run did not read: never silent.
            exitCode = ExitCodes.recordsLost
            logger.error("fewer records read than the inputs state", metadata: [
                "lost": .stringConvertible(report.recordsLost), "stated": .stringConvertible(stated),
                "maxFailureRate": .stringConvertible(settings[Settings.maxFailureRate] ?? 0),
            ])
        } else if let allowed = settings[Settings.maxFailureRate], report.sources > 0,
                  Double(report.failed) / Double(report.sources) > allowed {
            exitCode = ExitCodes.failureRateExceeded
            logger.error("failure rate over the limit", metadata: [
                "failed": .stringConvertible(report.failed), "sources": .stringConvertible(report.sources),
                "maxFailureRate": .stringConvertible(allowed),
            ])
        }
        print(report.summary)
        print("cache: \(configuration.cacheDirectory.standardizedFileURL.path)")
        // Each output on its own: one that cannot be written does not stop the others, and
        // is exit 74 (the run is done and the cache saved), unless a run's own exit code
        // says more.
        var outputFailed = false
        func output(_ name: String, _ write: () throws -> Void) {
            do { try write() } catch {
                outputFailed = true
                logger.error("\(name) not written: \(error) (the run is done and the cache saved)")
            }
        }
        if let path = settings[Settings.report] {
            output("the report \(path)") { try ReportOutputs.writeAtomically(try report.jsonData(), to: path) }
        }
        if let path = settings[Settings.metricsFile] {
            output("the metrics file \(path)") {
                try ReportOutputs.writeAtomically(Data(ReportOutputs.prometheus(report, exitCode: exitCode.rawValue).utf8), to: path)
            }
        }
        if let path = ProcessInfo.processInfo.environment["GITHUB_STEP_SUMMARY"], !path.isEmpty {
            output("the step summary $GITHUB_STEP_SUMMARY (\(path))") {
                try ReportOutputs.append(ReportOutputs.markdown(report, exitCode: exitCode.rawValue), to: path)
            }
        }
        if exitCode == ExitCodes.success, outputFailed { exitCode = ExitCodes.outputNotWritten }
        if exitCode != ExitCodes.success { throw exitCode }
    }
}

/// SIGINT and SIGTERM stop the run gracefully: no new source starts, what runs finishes,
/// the cache is saved, and the exit code is 128 + the signal. A second signal ends the
/// process at once (the cache stays consistent: every write is a rename).
// Why @unchecked: the signal sources are Dispatch's (C handles, not Sendable), kept only
// in init (their handlers need self) and cancelled once.
final class SignalWatcher: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    private let signal = Mutex<Int32?>(nil)

    init(control: RunControl, logger: Logger) {
        for number in [SIGINT, SIGTERM] {
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                let first = signal.withLock { signal -> Bool in
                    defer { if signal == nil { signal = number } }
                    return signal == nil
                }
                if !first { _exit(128 + number) }
                let name = number == SIGINT ? "SIGINT" : "SIGTERM"
                logger.warning("\(name): finishing what is in flight, then saving; send it again to stop at once")
                control.stop(name)
            }
            source.resume()
            sources.append(source)
        }
    }

    var received: Int32? { signal.withLock { $0 } }

    func cancel() {
        for source in sources { source.cancel() }
        for number in [SIGINT, SIGTERM] { Glibc.signal(number, SIG_DFL) }
    }
}

/// A progress bar on stderr with count, rate and ETA, drawn only on a terminal.
final class TerminalProgress: Sendable {
    private struct Drawing {
        var started = Date()
        var stage = ""
        var lastDraw = Date.distantPast
        var drawn = false
    }
    private let drawing = Mutex(Drawing())

    func update(_ step: RunProgress) {
        drawing.withLock { drawing in
            if step.stage != drawing.stage {
                drawing.stage = step.stage
                drawing.started = Date()
            }
            let now = Date()
            guard step.done == step.total || now.timeIntervalSince(drawing.lastDraw) >= 0.1 else { return }
            drawing.lastDraw = now
            let elapsed = max(now.timeIntervalSince(drawing.started), 0.001)
            let rate = Double(step.done) / elapsed
            let remaining = rate > 0 ? Double(step.total - step.done) / rate : 0
            let width = 30
            let filled = step.total > 0 ? width * step.done / step.total : width
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let eta = String(format: "%d:%02d", Int(remaining) / 60, Int(remaining) % 60)
            let line = String(format: "\r\u{1B}[K%@ %@ %d/%d %.1f/s ETA %@", drawing.stage, bar, step.done, step.total, rate, eta)
            FileHandle.standardError.write(Data(line.utf8))
            drawing.drawn = true
        }
    }

    /// Clears the bar's line so a log line can be written.
    func clearLine() {
        drawing.withLock { drawing in
            if drawing.drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        }
    }

    func finish() {
        clearLine()
        drawing.withLock { $0.drawn = false }
    }
}
