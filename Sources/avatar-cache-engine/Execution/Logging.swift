import ArgumentParser
import Foundation
import AvatarCache
import Logging
import Synchronization

/// Log lines on stderr: text for people, or one JSON object per line for log shippers.
enum Logging {
    private static let bootstrapped = Mutex(false)

    static func make(format: LogFormat, level: Logger.Level, progress: TerminalProgress?) -> Logger {
        let first = bootstrapped.withLock { bootstrapped in
            defer { bootstrapped = true }
            return !bootstrapped
        }
        if first {
            LoggingSystem.bootstrap { label in
                LineLogHandler(label: label, format: format, level: level, progress: progress)
            }
        }
        var logger = Logger(label: "avatar-cache")
        logger.logLevel = level
        return logger
    }
}

struct LineLogHandler: LogHandler {
    let label: String
    let format: LogFormat
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    let progress: TerminalProgress?
    private static let lock = Mutex(())

    init(label: String, format: LogFormat, level: Logger.Level, progress: TerminalProgress?) {
        self.label = label
        self.format = format
        self.logLevel = level
        self.progress = progress
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// A metadata value as JSON: numbers and booleans given as such stay numbers and
    /// booleans; everything else is text.
    static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .stringConvertible(let convertible):
            switch convertible {
            case let number as Int: return number
            case let number as Int64: return number
            case let number as Double where number.isFinite: return number
            case let flag as Bool: return flag
            default: return convertible.description
            }
        case .string(let text): return text
        case .array(let values): return values.map(json)
        case .dictionary(let values): return values.mapValues(json)
        }
    }

    func log(event: LogEvent) {
        write(level: event.level, message: event.message, metadata: event.metadata)
    }

    /// One line on stderr, as text or JSON.
    func write(level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?) {
        let all = metadata.merging(explicit ?? [:]) { $1 }
        let time = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        let text: String
        switch format {
        case .json:
            var object: [String: Any] = ["time": time, "level": level.rawValue, "message": message.description]
            for (key, value) in all where object[key] == nil { object[key] = Self.json(value) }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            text = String(decoding: data, as: UTF8.self) + "\n"
        case .text:
            let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            text = "\(time) \(level.rawValue) \(message)" + (fields.isEmpty ? "" : " \(fields)") + "\n"
        }
        progress?.clearLine()
        Self.lock.withLock { _ in FileHandle.standardError.write(Data(text.utf8)) }
    }
}

