import Foundation

/// The built `avatar-cache` binary, run as an operator runs it.
package enum Binary {
    package struct Result {
        package var status: Int32
        package var stdout: String
        package var stderr: String
    }

    /// Where the build put it: the test bundle sits beside the built products.
    package static var url: URL {
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [products, products.deletingLastPathComponent()]
        for directory in candidates {
            let url = directory.appendingPathComponent("avatar-cache")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return Fixtures.repositoryRoot.appendingPathComponent(".build/debug/avatar-cache")
    }

    /// Starts the binary with `environment` added to this process's, its output read by
    /// the caller through the pipes returned.
    package static func start(_ arguments: [String], environment: [String: String] = [:],
                              executable: URL = url) throws -> (process: Process, stdout: Pipe, stderr: Pipe) {
        let out = Pipe(), err = Pipe()
        let process = try launch(arguments, environment: environment, executable: executable, output: out, errors: err)
        return (process, out, err)
    }

    /// Starts the binary with its output discarded (a run to be killed, say).
    package static func startQuietly(_ arguments: [String]) throws -> Process {
        try launch(arguments, environment: [:], executable: url, output: FileHandle.nullDevice, errors: FileHandle.nullDevice)
    }

    private static func launch(_ arguments: [String], environment: [String: String], executable: URL,
                               output: Any, errors: Any) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        return process
    }

    /// Runs the binary (or `executable`) to its end, with `environment` added to this
    /// process's, and collects its output.
    package static func run(_ arguments: [String], environment: [String: String] = [:], executable: URL = url) throws -> Result {
        let (process, out, err) = try start(arguments, environment: environment, executable: executable)
        // Both pipes drained at once: a child that fills one (64 KB of stderr) while the
        // other is read to its end would wait forever.
        let stderrRead = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var stderr = Data()
        Thread.detachNewThread {
            stderr = err.fileHandleForReading.readDataToEndOfFile()
            stderrRead.signal()
        }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        stderrRead.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }
}
