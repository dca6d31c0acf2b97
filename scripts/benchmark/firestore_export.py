#!/usr/bin/env python3
"""Writes a Firestore export in the format `firebase emulators:export` and `gcloud firestore
export` write: LevelDB log files (`output-N`, 32 KiB blocks, FULL/FIRST/MIDDLE/LAST records,
masked CRC-32C) of Datastore EntityProto messages, the kind's `.export_metadata` naming its
outputs, the `.overall_export_metadata`, and the emulator's `firebase-export-metadata.json`
(with `auth_export/accounts.json` when --auth). The encoding follows the real exports in
Tests/Fixtures/firebase (property 14 for an empty array, raw_property 15
for the rest, the key's path as groups, entity_group 16).

    usage: firestore_export.py OUT (--users N | --from-json USERS.json) [--photo-base URL] [--photo-field NAME]
           [--name-field NAME] [--collection users] [--conversations M]
           [--participants array|map|subcollection|roles] [--auth N] [--docs-per-file K]
           [--layout emulator|production] [--collection-ids] [--times START,END] [--handles]
           [--shadow-users] [--keep-fields] [--no-email] [--same-name-subcollection] [--database N] [--database-node NAME] [--no-firestore]
           [--storage N --storage-photos DIR --storage-refs gs|path|url|map --storage-layout uuid|nested|flat] [--seed S]
           [--documents DOCS.json]

The metadata is Firebase's own layout, checked byte for byte against real exports in
FirebaseExportTests: a kind's .export_metadata names every output file in one message (the
name field repeated; production repeats the kind inside it in field 3 and calls it `__all__`, or
by its collection id with --collection-ids); the overall metadata is a LevelDB log of the
record "3" and one message stating each kind's documents and bytes (the documents' own
bytes in production, the files' in the emulator). Production output files end
zero-padded to a whole 32 KiB block; the emulator's do not. The emulator's layout is a root
with firebase-export-metadata.json and firestore_export/; production's is the export's
folder with <timestamp>.overall_export_metadata in it.

User i is `u<i>`; every user has a photo URL `<photo-base>/<i % 60>.jpg?u=<i>` (distinct
URLs) unless --photo-base is empty. Conversation j is between two users; the higher j, the
more recent. --from-json writes the people of a NexusAI users export (`{"users": [...]}`)
as `users` documents with NexusAI's names (the id as the document id), for comparing the
two formats on the same profiles. Uses the `crc32c` module when it is installed, a table otherwise (fine for
thousands of documents, slow for a million).
"""
import argparse
import json
import os
import random
import struct

try:
    import crc32c as _crc32c  # PyPI `crc32c`: hardware CRC

    def crc32c(data):
        return _crc32c.crc32c(data)
except ImportError:
    _table = []
    for _n in range(256):
        _c = _n
        for _ in range(8):
            _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
        _table.append(_c)

    def crc32c(data):
        crc = 0xFFFFFFFF
        for byte in data:
            crc = _table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
        return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(field, wire):
    return varint(field << 3 | wire)


def ld(field, payload):
    return tag(field, 2) + varint(len(payload)) + payload


def path_groups(path, group, type_field, name_field):
    out = b""
    for collection, doc_id in path:
        out += tag(group, 3) + ld(type_field, collection.encode()) + ld(name_field, doc_id.encode()) + tag(group, 4)
    return out


def value(v):
    """(meaning, PropertyValue bytes, multiple-values) of a Python value."""
    if v is None:
        return 0, b""
    if isinstance(v, bool):
        return 0, tag(2, 0) + varint(int(v))
    if isinstance(v, int):
        return 0, tag(1, 0) + varint(v)
    if isinstance(v, float):
        return 0, tag(4, 1) + struct.pack("<d", v)
    if isinstance(v, str):
        return (15 if len(v.encode()) > 1500 else 0), ld(3, v.encode())
    if isinstance(v, bytes):
        return 16, ld(3, v)
    if isinstance(v, Timestamp):
        return 7, tag(1, 0) + varint(v.micros)
    if isinstance(v, Reference):
        return 0, tag(12, 3) + ld(13, b"dev~bench") + path_groups(v.path, 14, 15, 17) + tag(12, 4)
    if isinstance(v, dict):
        return 19, ld(3, entity(None, v))
    raise TypeError(type(v))


class Timestamp:
    def __init__(self, micros):
        self.micros = micros


class Reference:
    def __init__(self, path):
        self.path = path


def prop(name, v, multiple=False):
    if isinstance(v, list):
        if not v:
            return ld(14, tag(1, 0) + varint(24) + ld(3, name.encode()) + tag(4, 0) + varint(0) + ld(5, b""))
        return b"".join(prop(name, element, True) for element in v)
    meaning, payload = value(v)
    body = (tag(1, 0) + varint(meaning) if meaning else b"") + ld(3, name.encode()) + tag(4, 0) + varint(int(multiple)) + ld(5, payload)
    return ld(15, body)


def entity(path, fields):
    out = b""
    if path is not None:
        out += ld(13, ld(13, b"dev~bench") + ld(14, path_groups(path, 1, 2, 4)))
    for name, v in fields.items():
        out += prop(name, v)
    if path is not None:
        out += tag(16, 2) + varint(len(path_groups(path[:1], 1, 2, 4))) + path_groups(path[:1], 1, 2, 4)
    return out


class LogWriter:
    BLOCK = 32768

    def __init__(self, path, pad=False):
        self.file = open(path, "wb")
        self.offset = 0
        self.pad = pad
        self.payload = 0

    def add(self, record):
        self.payload += len(record)
        first = True
        while True:
            left = self.BLOCK - self.offset % self.BLOCK
            if left < 7:
                self.file.write(b"\0" * left)
                self.offset += left
                left = self.BLOCK
            room = left - 7
            piece, record = record[:room], record[room:]
            last = not record
            kind = (1 if last else 2) if first else (4 if last else 3)
            header = struct.pack("<IHB", masked(crc32c(bytes([kind]) + piece)), len(piece), kind)
            self.file.write(header + piece)
            self.offset += 7 + len(piece)
            first = False
            if last:
                return

    def close(self):
        # A production export's files end zero-padded to a whole block.
        if self.pad and self.offset % self.BLOCK:
            self.file.write(b"\0" * (self.BLOCK - self.offset % self.BLOCK))
        self.file.close()


def kind_metadata(outputs, kind, production, start, end):
    """A kind's .export_metadata as Firebase writes it: raw protobuf, { 1: { label, start,
    end }, 2: { 1: kind, 2: output file (repeated: every file in one message) } }; in
    production the kind's message ends with { 3: { 1: kind } }."""
    label = b"export_entities" if production else b"firestore_export"
    info = ld(1, label) + tag(2, 0) + varint(start) + tag(3, 0) + varint(end)
    files = ld(1, kind.encode()) + b"".join(ld(2, name.encode()) for name in outputs)
    if production:
        files += ld(3, ld(1, kind.encode()))
    return ld(1, info) + ld(2, files)


def overall_metadata(path, kinds):
    """The .overall_export_metadata: a LevelDB log of the record "3" and one message with,
    per kind, { 1: { 1: 2, 3: 3 }, 2: its metadata's path, 3: documents, 4: bytes }."""
    log = LogWriter(path, pad=False)
    log.add(b"3")
    entries = b""
    for metadata_path, documents, size in kinds:
        entries += ld(1, ld(1, tag(1, 0) + varint(2) + tag(3, 0) + varint(3)) + ld(2, metadata_path.encode())
                      + tag(3, 0) + varint(documents) + tag(4, 0) + varint(size))
    log.add(entries)
    log.close()


def write_storage(root, args, objects):
    """storage_export/ as the Storage emulator writes it: buckets.json, and per object its
    blob and a metadata JSON naming its bucket and name (the layout by --storage-layout)."""
    import base64
    import hashlib
    import uuid
    from urllib.parse import quote
    photos = sorted(os.path.join(args.storage_photos, n) for n in os.listdir(args.storage_photos)) if args.storage_photos else []
    folder = os.path.join(root, "storage_export")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "buckets.json"), "w") as f:
        json.dump({"buckets": [{"id": args.bucket}]}, f, indent=2)
    for name, token, i in objects:
        data = open(photos[i % len(photos)], "rb").read() if photos else b""
        if args.storage_layout == "uuid":
            relative = str(uuid.UUID(int=random.Random(i).getrandbits(128), version=4))
        elif args.storage_layout == "nested":
            relative = os.path.join(args.bucket, name)
        else:
            relative = quote("%s/%s" % (args.bucket, name), safe="")
        blob = os.path.join(folder, "blobs", relative)
        meta = os.path.join(folder, "metadata", relative + ".json")
        for path in (blob, meta):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(blob, "wb") as f:
            f.write(data)
        generation = 1734539664177 + i
        with open(meta, "w") as f:
            json.dump({"name": name, "bucket": args.bucket, "metageneration": 1, "generation": generation,
                       "contentType": "image/jpeg", "storageClass": "STANDARD", "contentDisposition": "inline",
                       "downloadTokens": [token], "etag": "someETag", "customMetadata": {},
                       "timeCreated": "2024-12-18T16:34:24.177Z", "updated": "2024-12-18T16:34:24.177Z", "size": len(data),
                       "md5Hash": base64.b64encode(hashlib.md5(data).digest()).decode(), "crc32c": str(crc32c(data))}, f, indent=2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--users", type=int, default=0)
    parser.add_argument("--from-json")
    parser.add_argument("--photo-base", default="http://127.0.0.1:8080/photos")
    parser.add_argument("--photo-field", default="photoURL")
    parser.add_argument("--name-field", default="displayName")
    parser.add_argument("--collection", default="users")
    parser.add_argument("--conversations", type=int, default=0)
    parser.add_argument("--participants", default="array", choices=["array", "map", "subcollection", "roles"])
    parser.add_argument("--auth", type=int, default=0, help="Auth accounts for the first N users, and N/10 more without a document")
    parser.add_argument("--docs-per-file", type=int, default=5000,
                        help="documents an output file holds before the next is begun (the emulator splits at about that)")
    parser.add_argument("--layout", default="emulator", choices=["emulator", "production"],
                        help="emulator: firebase emulators:export's root; production: gcloud firestore export's folder")
    parser.add_argument("--collection-ids", action="store_true",
                        help="production: a kind folder per collection (kind_<id>), as gcloud firestore export --collection-ids writes")
    parser.add_argument("--handles", action="store_true",
                        help="every user also has a `username` handle; only two in three have the name field")
    parser.add_argument("--shadow-users", action="store_true",
                        help="also a `users` collection holding only uid and e-mail (the people being in --collection)")
    parser.add_argument("--database", type=int, default=0,
                        help="a Realtime Database export too: N people under --database-node (the first 5 also Firestore users), "
                             "as database_export/<project>-default-rtdb.json, one line of JSON as the emulator writes it")
    parser.add_argument("--database-node", default="userDetails")
    parser.add_argument("--no-firestore", action="store_true", help="an emulator export without its Firestore part")
    parser.add_argument("--storage", type=int, default=0,
                        help="the first N users' photos kept in Cloud Storage: storage_export/ with their blobs (the files of "
                             "--storage-photos, in turn), the documents naming them as --storage-refs says")
    parser.add_argument("--storage-photos", help="a folder of photo files for --storage")
    parser.add_argument("--storage-refs", default="gs", choices=["gs", "path", "url", "map"],
                        help="gs://bucket/users/<uid>/avatar.jpg, the bare path, the emulator's download URL, or { bucket, fullPath }")
    parser.add_argument("--storage-layout", default="uuid", choices=["uuid", "nested", "flat"],
                        help="the emulator's layouts of blobs/ and metadata/: a UUID per object (firebase-tools 11.6 on), "
                             "a folder per path segment (9.18-10.x), the bucket and name URL-encoded (10.7-11.2)")
    parser.add_argument("--bucket", default="demo-project.appspot.com")
    parser.add_argument("--documents", help="a JSON object of documents by path (\"users/u1\", \"clubs/c1/members/m1\"), each "
                                              "an object of fields ({\"$timestamp\": microseconds} a timestamp), written in order")
    parser.add_argument("--keep-fields", action="store_true", help="--from-json: every field of a record, its id included")
    parser.add_argument("--no-email", action="store_true", help="users without an e-mail or uid field (a name and a photo only)")
    parser.add_argument("--same-name-subcollection", action="store_true",
                        help="also security_groups/<collection>/<collection>/<uid> documents (a subcollection named as the people's "
                             "collection, holding a map under `name`), as a real export does")
    parser.add_argument("--times", default="1779509654590966,1779509654597585",
                        help="the export's start and end, microseconds since 1970, as its kind metadata states them")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    first_names = ["Ada", "Bob", "Chen", "Dana", "Émile", "Fatima", "Giorgos", "Hana", "Ivan", "Józef", "Kwame", "Lea"]
    last_names = ["Smith", "Okafor", "Müller", "Tanaka", "García", "Nguyen", "Kowalski", "Haddad"]

    root = args.out
    production = args.layout == "production"
    store = os.path.join(root, "firestore_export") if not production else root
    start_time, end_time = (int(t) for t in args.times.split(","))
    # Per kind folder: its outputs, writer, documents, payload and file bytes.
    kinds = {}

    def kind_of(collection):
        return ("kind_%s" % collection) if args.collection_ids else "all_kinds"

    def add(path, fields):
        folder = kind_of(path[0][0])
        kind = kinds.get(folder)
        if kind is None:
            os.makedirs(os.path.join(store, "all_namespaces", folder), exist_ok=True)
            kind = kinds[folder] = {"outputs": [], "writer": None, "count": 0, "payload": 0, "files": 0,
                                    "name": path[0][0] if args.collection_ids else ("__all__" if production else "")}
        if kind["writer"] is None or kind["count"] % args.docs_per_file == 0:
            close(kind)
            kind["outputs"].append("output-%d" % len(kind["outputs"]))
            kind["writer"] = LogWriter(os.path.join(store, "all_namespaces", folder, kind["outputs"][-1]), pad=production)
        kind["writer"].add(entity(path, fields))
        kind["count"] += 1

    def close(kind):
        writer = kind["writer"]
        if writer:
            writer.close()
            kind["payload"] += writer.payload
            kind["files"] += os.path.getsize(writer.file.name)
            kind["writer"] = None

    base = 1_700_000_000_000_000
    storage_objects = []
    if args.from_json:
        with open(args.from_json, encoding="utf-8") as f:
            for user in json.load(f)["users"]:
                fields = dict(user) if args.keep_fields else {k: user[k] for k in ("displayName", "email", "profileImageUrl", "avatarColorHex") if k in user}
                add([(args.collection, str(user["id"]))], fields)
    if args.documents:
        def fields_of(v):
            if isinstance(v, dict):
                if set(v) == {"$timestamp"}:
                    return Timestamp(v["$timestamp"])
                return {k: fields_of(x) for k, x in v.items()}
            if isinstance(v, list):
                return [fields_of(x) for x in v]
            return v
        with open(args.documents, encoding="utf-8") as f:
            for doc_path, fields in json.load(f).items():
                parts = doc_path.split("/")
                add(list(zip(parts[0::2], parts[1::2])), fields_of(fields))
    for i in range(args.users):
        name = "%s %s" % (rng.choice(first_names), rng.choice(last_names))
        fields = {"uid": "u%d" % i, args.name_field: name, "email": "u%d@example.com" % i,
                  "createdAt": Timestamp(base + i * 1000), "followers": [], "score": rng.random()}
        if args.no_email:
            del fields["uid"], fields["email"]
        if args.handles:
            fields["username"] = "%s_%d" % (name.split()[0].lower(), i)
            if i % 3 == 2:
                del fields[args.name_field]
        if i < args.storage:
            name = "users/u%d/avatar.jpg" % i
            token = "%08x-0000-4000-8000-%012x" % (i, i)
            storage_objects.append((name, token, i))
            fields[args.photo_field] = {
                "gs": "gs://%s/%s" % (args.bucket, name),
                "path": name,
                "url": "http://127.0.0.1:9199/v0/b/%s/o/%s?alt=media&token=%s" % (args.bucket, name.replace("/", "%2F"), token),
                "map": {"bucket": args.bucket, "fullPath": name},
            }[args.storage_refs]
        elif args.photo_base:
            fields[args.photo_field] = "%s/%d.jpg?u=%d" % (args.photo_base, i % 60, i)
        add([(args.collection, "u%d" % i)], fields)
        if args.same_name_subcollection:
            add([("security_groups", args.collection), (args.collection, "u%d" % i)], {"name": {"read": True, "write": False}})
        if args.shadow_users:
            add([("users", "u%d" % i)], {"uid": "u%d" % i, "email": "u%d@example.com" % i})
    for j in range(args.conversations):
        a, b = rng.randrange(args.users), rng.randrange(args.users)
        updated = Timestamp(base + 10_000_000 * (j + 1))
        doc = {"updatedAt": updated, "lastMessage": {"senderId": "u%d" % a, "text": "hi", "timestamp": updated}}
        if args.participants == "array":
            doc["participantIds"] = ["u%d" % a, "u%d" % b]
        elif args.participants == "map":
            doc["participants"] = {"u%d" % a: True, "u%d" % b: True}
        elif args.participants == "roles":
            doc["buyerId"], doc["sellerId"] = "u%d" % a, "u%d" % b
            doc["lastMessage"] = {"senderId": "u%d" % a}
        add([("conversations", "c%d" % j)], doc)
        if args.participants == "subcollection":
            for user in (a, b):
                add([("conversations", "c%d" % j), ("participants", "u%d" % user)], {"joinedAt": updated})
    if not kinds:
        # No document: one kind with an empty output file (no real empty export was seen to check this against).
        os.makedirs(os.path.join(store, "all_namespaces", "all_kinds"), exist_ok=True)
        kinds["all_kinds"] = {"outputs": ["output-0"], "writer": LogWriter(os.path.join(store, "all_namespaces", "all_kinds", "output-0")),
                              "count": 0, "payload": 0, "files": 0, "name": "__all__" if production else ""}
    entries = []
    for folder in sorted(kinds):
        kind = kinds[folder]
        close(kind)
        metadata_name = "all_namespaces_%s.export_metadata" % folder
        with open(os.path.join(store, "all_namespaces", folder, metadata_name), "wb") as f:
            f.write(kind_metadata(kind["outputs"], kind["name"], production, start_time, end_time))
        # The bytes it states: the documents' own in production, the files' in the emulator.
        entries.append(("all_namespaces/%s/%s" % (folder, metadata_name), kind["count"],
                        kind["payload"] if production else kind["files"]))
    count = sum(kind["count"] for kind in kinds.values())
    outputs = [name for kind in kinds.values() for name in kind["outputs"]]
    if production:
        overall_metadata(os.path.join(root, "2026-11-27T08:00:00_54321.overall_export_metadata"), entries)
        print("%d documents in %d output files" % (count, len(outputs)))
        return
    meta = {"version": "13.0.0"}
    if args.no_firestore:
        import shutil
        shutil.rmtree(store)
    else:
        overall_metadata(os.path.join(store, "firestore_export.overall_export_metadata"), entries)
        meta["firestore"] = {"version": "1.19.0", "path": "firestore_export",
                             "metadata_file": "firestore_export/firestore_export.overall_export_metadata"}
    if args.storage:
        write_storage(root, args, storage_objects)
        meta["storage"] = {"version": "13.0.0", "path": "storage_export"}
    if args.database:
        meta["database"] = {"version": "4.11.2", "path": "database_export"}
        os.makedirs(os.path.join(root, "database_export"), exist_ok=True)
        people = {}
        first = max(0, args.users - 5)
        for i in list(range(min(5, args.users))) + list(range(args.users, args.users + args.database - min(5, args.users))):
            person = {"username": "%s %s" % (rng.choice(first_names), rng.choice(last_names)), "moderator": False,
                      "epochNextPlace": 1700000000 + i}
            if args.photo_base:
                person["photoURL"] = "%s/%d.jpg?rtdb=%d" % (args.photo_base, i % 60, i)
            people["u%d" % i] = person
        tree = {"rooms": {"r1": {"title": "General", "createdAt": 1700000000000}}, args.database_node: people,
                "userName": {person["username"]: {"uid": uid} for uid, person in people.items()}}
        with open(os.path.join(root, "database_export", "demo-project-default-rtdb.json"), "w") as f:
            json.dump(tree, f, separators=(",", ":"))
    if args.auth:
        meta["auth"] = {"version": "13.0.0", "path": "auth_export"}
        os.makedirs(os.path.join(root, "auth_export"), exist_ok=True)
        users = []
        for i in list(range(min(args.auth, args.users))) + list(range(args.users, args.users + args.auth // 10)):
            account = {"localId": "u%d" % i, "displayName": "Auth User %d" % i, "email": "u%d@example.com" % i,
                       "passwordHash": "fakeHash:salt=fakeSalt%d:password=secret%d" % (i, i), "salt": "fakeSalt%d" % i,
                       "providerUserInfo": [{"providerId": "google.com", "photoUrl": "%s/%d.jpg?auth=%d" % (args.photo_base or "http://127.0.0.1:9/auth", i % 60, i)}]}
            users.append(account)
        with open(os.path.join(root, "auth_export", "accounts.json"), "w") as f:
            json.dump({"kind": "identitytoolkit#DownloadAccountResponse", "users": users}, f, indent=1)
    with open(os.path.join(root, "firebase-export-metadata.json"), "w") as f:
        json.dump(meta, f, indent=2)
    print("%d documents in %d output files" % (count, len(outputs)))


if __name__ == "__main__":
    main()
