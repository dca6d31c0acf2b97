#!/usr/bin/env python3
"""Builds the benchmark corpus: base photos derived from scikit-image's bundled photos
(PyPI wheel, public domain / CC0), then an N-profile export where every profile has its
own photo bytes (per-profile JPEG comment, PNG text chunk, GIF comment, WebP chunk or
HEIF `free` box), so content de-duplication cannot hide the pipeline's cost.

Mix of the photos, as in issue 6: 60 % small JPEGs (96-400 px), 25 % phone JPEGs
(3-12 MP: upscaled with added grain for a realistic entropy-decode cost; some
progressive, some EXIF-rotated, one CMYK), 15 % PNG / WebP / HEIC / GIF.
About one profile in six has no photo.

usage: corpus.py WORKDIR N BASE_URL
"""
import glob, json, os, struct, subprocess, sys, zipfile

from photo_variants import unique

work, count, base_url = sys.argv[1], int(sys.argv[2]), sys.argv[3].rstrip("/")
bases = os.path.join(work, "bases")
photos = os.path.join(work, "www", "photos")
os.makedirs(bases, exist_ok=True)
os.makedirs(photos, exist_ok=True)


def vips(*args):
    subprocess.run(["vips", *args], check=True, stdout=subprocess.DEVNULL)


def source_photos():
    wheel_dir = os.path.join(work, "wheel")
    if not glob.glob(os.path.join(wheel_dir, "scikit_image-*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", wheel_dir, "scikit-image==0.26.0"], check=True)
    data = os.path.join(work, "skimage-data")
    if not os.path.isdir(data):
        with zipfile.ZipFile(glob.glob(os.path.join(wheel_dir, "scikit_image-*.whl"))[0]) as wheel:
            for name in wheel.namelist():
                if name.startswith("skimage/data/") and name.rsplit(".", 1)[-1] in ("png", "jpg"):
                    wheel.extract(name, work)
        os.rename(os.path.join(work, "skimage", "data"), data)
    names = ["astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg", "hubble_deep_field.jpg", "retina.jpg",
             "motorcycle_left.png", "ihc.png", "camera.png", "coins.png"]
    return [os.path.join(data, n) for n in names]


def exif_orientation_6(path):
    data = open(path, "rb").read()
    tiff = b"MM\x00\x2a" + struct.pack(">I", 8) + struct.pack(">H", 1) + struct.pack(">HHIHH", 0x0112, 3, 1, 6, 0) + struct.pack(">I", 0)
    app1 = b"Exif\x00\x00" + tiff
    open(path, "wb").write(data[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + data[2:])


def build_bases():
    marker = os.path.join(bases, ".done")
    if os.path.exists(marker):
        return sorted(f for f in os.listdir(bases) if not f.startswith("."))
    sources = source_photos()
    made = []
    # 24 small JPEGs, 96-400 px.
    sizes = [96, 128, 160, 200, 240, 280, 320, 400]
    for i in range(24):
        src, size = sources[i % len(sources)], sizes[i % len(sizes)]
        out = os.path.join(bases, f"small-{i:02d}.jpg")
        subprocess.run(["vipsthumbnail", src, "--size", f"{size}x{size}", "-o", out + "[Q=85,strip]"], check=True)
        made.append(out)
    # 10 phone JPEGs: 3, 6 and 12 MP, grain added; progressive, rotated, CMYK among them.
    phone = [(2000, 1500, ""), (3000, 2000, ""), (4000, 3000, ""), (3000, 2000, ",interlace"), (4000, 3000, ",interlace"),
             (4000, 3000, "rotate"), (2000, 1500, "rotate"), (3000, 2000, ""), (4000, 3000, "cmyk"), (2000, 1500, ",interlace")]
    for i, (w, h, kind) in enumerate(phone):
        src = sources[(i * 3) % 8]
        up, noisy = os.path.join(work, "up.v"), os.path.join(work, "noisy.v")
        header = subprocess.run(["vipsheader", "-f", "width", src], capture_output=True, text=True, check=True).stdout
        scale = w / int(header)
        vips("resize", src, up, str(scale), "--vscale", str(h / int(subprocess.run(["vipsheader", "-f", "height", src], capture_output=True, text=True, check=True).stdout)))
        vips("gaussnoise", os.path.join(work, "grain.v"), str(w), str(h), "--sigma", "6")
        bands = int(subprocess.run(["vipsheader", "-f", "bands", up], capture_output=True, text=True, check=True).stdout)
        vips("add", up, os.path.join(work, "grain.v"), noisy)
        vips("cast", noisy, os.path.join(work, "noisy8.v"), "uchar")
        noisy = os.path.join(work, "noisy8.v")
        if bands == 1:
            vips("colourspace", noisy, os.path.join(work, "rgb.v"), "srgb")
            noisy = os.path.join(work, "rgb.v")
        out = os.path.join(bases, f"phone-{i:02d}-{w * h // 1_000_000}mp.jpg")
        if kind == "cmyk":
            vips("icc_export", noisy, os.path.join(work, "cmyk.v"), "--output-profile", "cmyk")
            vips("copy", os.path.join(work, "cmyk.v"), out + "[Q=90]")
        elif kind == "rotate":
            vips("rot", noisy, os.path.join(work, "rot.v"), "d270")
            vips("copy", os.path.join(work, "rot.v"), out + "[Q=90,strip]")
            exif_orientation_6(out)
        else:
            vips("copy", noisy, out + f"[Q=90,strip{kind}]")
        made.append(out)
    # 6 others: PNG, WebP, HEIC, GIF, PNG, WebP.
    others = [("png", 800, ""), ("webp", 1200, "[Q=80]"), ("heic", 1200, "[Q=60]"), ("gif", 400, ""), ("png", 600, ""), ("webp", 900, "[Q=80]")]
    for i, (ext, size, options) in enumerate(others):
        src = sources[(i + 2) % len(sources)]
        out = os.path.join(bases, f"other-{i:02d}.{ext}")
        tmp = os.path.join(work, "other.v")
        vips("resize", src, tmp, str(size / int(subprocess.run(["vipsheader", "-f", "width", src], capture_output=True, text=True, check=True).stdout)))
        vips("copy", tmp, out + options)
        made.append(out)
    open(marker, "w").write("ok\n")
    return sorted(os.path.basename(m) for m in made)


names = build_bases()
originals = {n: open(os.path.join(bases, n), "rb").read() for n in names}
users, with_photo = [], 0
first = ["Ann", "Bo", "Chen", "Dara", "Émile", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kofi", "Lía", "Mina", "Noor"]
last = ["Lee", "Okafor", "Silva", "Nguyen", "Kowalski", "Haddad", "Tanaka", "Müller", "Rossi", "Kim"]
for i in range(count):
    user = {"id": f"user-{i:06d}", "displayName": f"{first[i % 14]} {last[(i // 3) % 10]}", "email": f"user{i}@example.com"}
    if i % 6 != 5:
        name = names[with_photo % len(names)]
        ext = name.rsplit(".", 1)[1]
        file = f"p{i:06d}.{ext}"
        path = os.path.join(photos, file)
        if not os.path.exists(path):
            open(path, "wb").write(unique(originals[name], ext, f"avatar-cache bench profile {i}"))
        user["profileImageUrl"] = f"{base_url}/photos/{file}"
        with_photo += 1
    users.append(user)
json.dump({"users": users}, open(os.path.join(work, f"users-{count}.json"), "w"), ensure_ascii=False)
total = sum(os.path.getsize(os.path.join(photos, f)) for f in os.listdir(photos))
print(f"corpus: {count} profiles, {with_photo} with photos, {len(names)} base images, {total / 1e6:.0f} MB served", file=sys.stderr)
