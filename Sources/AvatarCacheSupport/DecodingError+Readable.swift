#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A decoded type that names itself in a decoding error ("expected a date").
package protocol ReadableTypeName {
    static var readableName: String { get }
}

extension DecodingError {
    /// "field \"id\": expected a string"-style text.
    package var readable: String {
        func path(_ context: Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "record" : "field \"\(keys.joined(separator: "."))\""
        }
        switch self {
        case let .keyNotFound(key, context):
            let parent = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "missing field \"\(parent.isEmpty ? "" : parent + ".")\(key.stringValue)\""
        case let .typeMismatch(type, context):
            return "\(path(context)): expected \(Self.name(type))"
        case let .valueNotFound(type, context):
            return "\(path(context)): expected \(Self.name(type)), found null"
        case let .dataCorrupted(context):
            let underlying = (context.underlyingError as? CocoaError)?.userInfo["NSDebugDescription"] as? String
            return "not valid JSON: \(underlying ?? context.debugDescription)"
        @unknown default:
            return String(describing: self)
        }
    }

    private static func name(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case let named as ReadableTypeName.Type: return named.readableName
        case is Int.Type, is Int64.Type, is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is [String].Type: return "an array of strings"
        default:
            let text = String(describing: type)
            return text.hasPrefix("Array") ? "an array" : "an object"
        }
    }
}

