import Foundation

/// HTTP dates (RFC 9110 IMF-fixdate, plus the obsolete RFC 850 and asctime forms).
enum HTTPDate {
    private static let formatters: [DateFormatter] = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"].map {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = $0
        return formatter
    }
    private static let lock = NSLock()

    static func parse(_ text: String) -> Date? {
        lock.withLock { formatters.lazy.compactMap { $0.date(from: text) }.first }
    }
}
