import AvatarCacheModel
import Foundation

/// What a warm would read from one export, without downloading or writing anything:
/// where the people were found and why (`PeopleChoice`, for the readers that choose),
/// how many, a sample of them, and the bad records. `avatar-cache inspect` prints it.
public struct ExportInspection: Sendable, Codable, Equatable {
    /// One person as a warm would cache them.
    public struct Person: Sendable, Codable, Equatable {
        public var id: String
        public var name: String
        public var initials: String
        /// The photo's URL, "inline N bytes", or nil (a monogram).
        public var photo: String?
    }

    public var export: String
    public var format: String
    public var choices: [PeopleChoice]
    public var people: Int
    public var peopleWithPhoto: Int
    public var sample: [Person]
    public var badRecords: Int
    /// The first bad records (at most `sampleSize`).
    public var firstBadRecords: [String]
    public var notes: [String]
    public var counts: [InputCount]

    /// People shown per export, and bad records.
    public static let sampleSize = 8

    /// Reads `path` as `format` (a warm's limits and map) and keeps what it found; only
    /// the sample of people is held, whatever the export's size.
    public static func inspect(_ path: String, format: ExportFormat, limits: ReaderLimits, map: FieldMap,
                               sampleSize: Int = ExportInspection.sampleSize) throws -> ExportInspection {
        var inspection = ExportInspection(export: path, format: format.rawValue, choices: [], people: 0, peopleWithPhoto: 0, sample: [],
                                          badRecords: 0, firstBadRecords: [], notes: [], counts: [])
        let observer = PeopleChoice.Observer()
        try PeopleChoice.$observer.withValue(observer) {
            try format.reader(path: path, limits: limits, map: map).read { item in
                switch item {
                case .profile(let profile):
                    inspection.people += 1
                    if profile.photo != nil { inspection.peopleWithPhoto += 1 }
                    if inspection.sample.count < sampleSize { inspection.sample.append(Person(profile)) }
                case .bad(let bad):
                    inspection.badRecords += 1
                    if inspection.firstBadRecords.count < sampleSize { inspection.firstBadRecords.append(bad.description) }
                case .note(let note):
                    inspection.notes.append(note)
                case .count(let count):
                    inspection.counts.append(count)
                }
            }
        }
        inspection.choices = observer.choices
        return inspection
    }
}

extension ExportInspection.Person {
    init(_ profile: Profile) {
        id = profile.id
        name = profile.displayName
        initials = profile.initials
        switch profile.photo {
        case .url(let url, _)?: photo = url
        case .inline(let inline)?: photo = "inline \(inline.bytes.count) bytes"
        case nil: photo = nil
        }
    }
}
