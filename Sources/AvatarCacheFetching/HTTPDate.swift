import Foundation
import Synchronization

/// HTTP dates (RFC 9110 IMF-fixdate, plus the obsolete RFC 850 and asctime forms).
enum HTTPDate {
    private static let formatters = Mutex<[DateFormatter]>(["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"].map {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = $0
        return formatter
    })

    static func parse(_ text: String) -> Date? {
        formatters.withLock { $0.lazy.compactMap { $0.date(from: text) }.first }
    }
}
