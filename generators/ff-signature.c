/* fusefarm: non-LVM signatures generated on demand (see ff-signature.h).
 *
 * Each signature is a short list of "pieces": an on-disk structure of at
 * most 1 KiB at a fixed offset, of which a window [lo, hi) may be
 * non-zero.  A read builds, in a stack buffer, each structure its range
 * overlaps and copies the overlap out.  Builders derive everything from
 * (dev_size, seed), so any range, cut anywhere, gives the same bytes as a
 * whole read.  There is no state: every function here is pure and
 * thread-safe.
 *
 * All sizes follow what the real tools do for the same device
 * (util-linux fdisk, sgdisk, mke2fs 1.47, mkfs.xfs 6.1 -m crc=0,
 * mdadm 4.2), so that blkid, dumpe2fs, xfs_db and mdadm --examine show
 * plausible values.
 */
#include "ff-signature.h"
#include "ff-bytes.h"
#include "ff-crc.h"

#include <string.h>

#define SECTOR 512u

/* Every timestamp written (ext4 mkfs/write time, md ctime/utime): the
 * farm spec's default creation_time, so that output never depends on
 * the clock. */
#define SIG_TIME 1796073320u

/* Salts that make each identifier an independent function of the seed. */
#define SALT_MBR_DISKID 0x6d62722d64736967ull
#define SALT_GPT_DISK   0x6770742d6469736bull
#define SALT_GPT_PART   0x6770742d70617274ull
#define SALT_EXT4_UUID  0x657874342d757569ull
#define SALT_EXT4_HASH  0x657874342d687368ull
#define SALT_XFS_UUID   0x7866732d75756964ull
#define SALT_MD_SET     0x6d642d7365747575ull
#define SALT_MD_DEV     0x6d642d6465767575ull

/* The largest structure a piece builds (the ext4 superblock). */
#define PIECE_MAX 1024u
/* The most pieces a signature has (gpt). */
#define PIECES_MAX 5

/* ------------------------------------------------------------------ */
/* Byte order and identifiers. */

/* splitmix64's finaliser: a bijection of 64-bit values, so distinct seeds
 * give distinct first words. */
static uint64_t
mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* 16 bytes determined by (seed, salt). */
static void
seed_bytes16(uint64_t seed, uint64_t salt, unsigned char *out)
{
  uint64_t a = mix64(seed ^ salt);
  uint64_t b = mix64(a + 0x9e3779b97f4a7c15ull);

  ff_put_le64(out, a);
  ff_put_le64(out + 8, b);
}

/* A random (version 4) UUID in the big-endian byte order ext4, xfs and
 * md store. */
static void
seed_uuid(uint64_t seed, uint64_t salt, unsigned char *out)
{
  seed_bytes16(seed, salt, out);
  out[6] = (unsigned char)((out[6] & 0x0f) | 0x40);
  out[8] = (unsigned char)((out[8] & 0x3f) | 0x80);
}

/* The same as a GPT GUID: its first three fields are little-endian on
 * disk, so the version nibble lives in byte 7. */
static void
seed_guid(uint64_t seed, uint64_t salt, unsigned char *out)
{
  seed_bytes16(seed, salt, out);
  out[7] = (unsigned char)((out[7] & 0x0f) | 0x40);
  out[8] = (unsigned char)((out[8] & 0x3f) | 0x80);
}

/* ------------------------------------------------------------------ */
/* DOS partition tables (mbr, and gpt's protective MBR). */

#define MBR_PART_START  2048u
#define MBR_MAX_SECTORS 0xffffffffu

/* The CHS triple of lba in the 255-head, 63-sector geometry fdisk uses;
 * addresses past cylinder 1023 saturate at (1023, 254, 63). */
static void
put_chs(unsigned char *p, uint64_t lba)
{
  uint64_t c = lba / (255 * 63);
  unsigned h = (unsigned)(lba / 63 % 255);
  unsigned s = (unsigned)(lba % 63 + 1);

  if (c > 1023) {
    c = 1023;
    h = 254;
    s = 63;
  }
  p[0] = (unsigned char)h;
  p[1] = (unsigned char)(s | ((c >> 2) & 0xc0));
  p[2] = (unsigned char)c;
}

/* One 16-byte partition entry at p. */
static void
put_mbr_entry(unsigned char *p, uint8_t type, uint32_t start, uint32_t count)
{
  p[0] = 0x00; /* not bootable */
  put_chs(p + 1, start);
  p[4] = type;
  put_chs(p + 5, (uint64_t)start + count - 1);
  ff_put_le32(p + 8, start);
  ff_put_le32(p + 12, count);
}

/* Sector 0 of an mbr device. */
static void
build_mbr(uint64_t dev_size, uint64_t seed, unsigned char *s)
{
  uint64_t count = dev_size / SECTOR - MBR_PART_START;
  uint32_t diskid = (uint32_t)mix64(seed ^ SALT_MBR_DISKID);

  if (count > MBR_MAX_SECTORS)
    count = MBR_MAX_SECTORS;
  /* fdisk never writes a zero disk identifier: 0 means "none". */
  if (diskid == 0)
    diskid = 1;
  ff_put_le32(s + 440, diskid);
  put_mbr_entry(s + 446, 0x83, MBR_PART_START, (uint32_t)count);
  s[510] = 0x55;
  s[511] = 0xaa;
}

/* ------------------------------------------------------------------ */
/* GPT (UEFI 2.x, 512-byte logical blocks). */

#define GPT_ENTRIES       128u
#define GPT_ENTRY_SIZE    128u
#define GPT_HEADER_SIZE   92u
#define GPT_ARRAY_SECTORS (GPT_ENTRIES * GPT_ENTRY_SIZE / SECTOR) /* 32 */
#define GPT_FIRST_USABLE  (2 + GPT_ARRAY_SECTORS)                 /* 34 */
#define GPT_ALIGN         2048u

/* Linux filesystem data, 0FC63DAF-8483-4772-8E79-3D69D8477DE4, in the
 * on-disk (mixed-endian) byte order. */
static const unsigned char gpt_linux_fs[16] = {
  0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47,
  0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4,
};

struct gpt_geom {
  uint64_t last;        /* last LBA: the backup header */
  uint64_t last_usable; /* last - 33 */
  uint64_t part_first;  /* 2048 */
  uint64_t part_last;   /* last_usable + 1 aligned down to 2048, - 1 */
};

static void
gpt_geom(uint64_t dev_size, struct gpt_geom *g)
{
  g->last = dev_size / SECTOR - 1;
  g->last_usable = g->last - GPT_ARRAY_SECTORS - 1;
  g->part_first = GPT_ALIGN;
  g->part_last = (g->last_usable + 1) / GPT_ALIGN * GPT_ALIGN - 1;
}

/* Sector 0 of a gpt device: one 0xEE partition covering the disk. */
static void
build_pmbr(uint64_t dev_size, unsigned char *s)
{
  uint64_t count = dev_size / SECTOR - 1;

  if (count > MBR_MAX_SECTORS)
    count = MBR_MAX_SECTORS;
  put_mbr_entry(s + 446, 0xee, 1, (uint32_t)count);
  s[510] = 0x55;
  s[511] = 0xaa;
}

/* The only used entry of the partition array (128 bytes). */
static void
build_gpt_entry(uint64_t dev_size, uint64_t seed, unsigned char *e)
{
  static const char name[] = "fusefarm";
  struct gpt_geom g;

  gpt_geom(dev_size, &g);
  memcpy(e, gpt_linux_fs, 16);
  seed_guid(seed, SALT_GPT_PART, e + 16);
  ff_put_le64(e + 32, g.part_first);
  ff_put_le64(e + 40, g.part_last);
  /* attributes (48..55) stay 0; the name is UTF-16LE from 56 */
  for (size_t i = 0; i < sizeof name - 1; i++)
    ff_put_le16(e + 56 + 2 * i, (uint16_t)name[i]);
}

/* CRC-32 of the whole 16 KiB array: entry 0 then 127 empty entries. */
static uint32_t
gpt_array_crc(uint64_t dev_size, uint64_t seed)
{
  static const unsigned char zeros[GPT_ENTRY_SIZE];
  unsigned char e[GPT_ENTRY_SIZE] = {0};
  uint32_t crc;

  build_gpt_entry(dev_size, seed, e);
  crc = ff_crc_update(0xffffffffu, e, sizeof e);
  for (unsigned i = 1; i < GPT_ENTRIES; i++)
    crc = ff_crc_update(crc, zeros, sizeof zeros);
  return ~crc;
}

/* The primary (backup == 0) or backup header; 92 bytes. */
static void
build_gpt_header(uint64_t dev_size, uint64_t seed, int backup,
                 unsigned char *h)
{
  struct gpt_geom g;

  gpt_geom(dev_size, &g);
  memcpy(h, "EFI PART", 8);
  ff_put_le32(h + 8, 0x00010000); /* revision 1.0 */
  ff_put_le32(h + 12, GPT_HEADER_SIZE);
  /* 16: header CRC, computed last; 20: reserved */
  ff_put_le64(h + 24, backup ? g.last : 1); /* my LBA */
  ff_put_le64(h + 32, backup ? 1 : g.last); /* alternate LBA */
  ff_put_le64(h + 40, GPT_FIRST_USABLE);
  ff_put_le64(h + 48, g.last_usable);
  seed_guid(seed, SALT_GPT_DISK, h + 56);
  ff_put_le64(h + 72, backup ? g.last - GPT_ARRAY_SECTORS : 2);
  ff_put_le32(h + 80, GPT_ENTRIES);
  ff_put_le32(h + 84, GPT_ENTRY_SIZE);
  ff_put_le32(h + 88, gpt_array_crc(dev_size, seed));
  ff_put_le32(h + 16, ff_crc32(h, GPT_HEADER_SIZE));
}

/* ------------------------------------------------------------------ */
/* ext4: the superblock mke2fs -t ext4 -b 4096 -O ^metadata_csum writes. */

#define EXT4_BLOCK          4096u
#define EXT4_BPG            32768u /* default blocks per group: 8 * 4096 */
#define EXT4_INODE_SIZE     256u
#define EXT4_DESC_SIZE      64u
#define EXT4_DESC_PER_BLOCK (EXT4_BLOCK / EXT4_DESC_SIZE)
#define EXT4_IPB            (EXT4_BLOCK / EXT4_INODE_SIZE)
/* The superblock is 1024 bytes; mke2fs's last non-zero field ends at
 * 0x24c (s_overhead_clusters). */
#define EXT4_SB_USED 0x24cu
/* 2^40 blocks (4 PiB): beyond that the inode count (32 bits) forces
 * geometries mke2fs would not make; larger devices get a 4 PiB fs. */
#define EXT4_MAX_BLOCKS (1ull << 40)

#define EXT4_COMPAT_HAS_JOURNAL  0x0004u
#define EXT4_COMPAT_EXT_ATTR     0x0008u
#define EXT4_COMPAT_RESIZE_INODE 0x0010u
#define EXT4_COMPAT_DIR_INDEX    0x0020u
#define EXT4_INCOMPAT_FILETYPE   0x0002u
#define EXT4_INCOMPAT_EXTENTS    0x0040u
#define EXT4_INCOMPAT_64BIT      0x0080u
#define EXT4_INCOMPAT_FLEX_BG    0x0200u
#define EXT4_RO_SPARSE_SUPER     0x0001u
#define EXT4_RO_LARGE_FILE       0x0002u
#define EXT4_RO_HUGE_FILE        0x0008u
#define EXT4_RO_DIR_NLINK        0x0020u
#define EXT4_RO_EXTRA_ISIZE      0x0040u

struct ext4_geom {
  uint64_t blocks;
  uint64_t free_blocks;
  uint64_t r_blocks;
  uint64_t overhead;
  uint32_t bpg; /* blocks per group */
  uint32_t groups;
  uint32_t ipg;     /* inodes per group */
  uint32_t rsv_gdt; /* reserved GDT blocks (resize_inode) */
  int resize_inode;
};

/* Whether group g holds a superblock backup under sparse_super: 0, 1 and
 * the powers of 3, 5 and 7. */
static int
ext4_has_super(uint64_t g)
{
  static const unsigned bases[] = {3, 5, 7};

  if (g <= 1)
    return 1;
  for (size_t i = 0; i < 3; i++) {
    uint64_t p = bases[i];

    while (p < g)
      p *= bases[i];
    if (p == g)
      return 1;
  }
  return 0;
}

/* How many of groups 0..groups-1 hold a superblock backup. */
static uint64_t
ext4_super_groups(uint64_t groups)
{
  static const unsigned bases[] = {3, 5, 7};
  uint64_t n = groups < 2 ? groups : 2;

  for (size_t i = 0; i < 3; i++)
    for (uint64_t p = bases[i]; p < groups; p *= bases[i])
      n++;
  return n;
}

/* ext2fs_default_journal_size() of e2fsprogs 1.47, in blocks. */
static uint32_t
ext4_journal_blocks(uint64_t blocks)
{
  if (blocks < 32768)
    return 1024;
  if (blocks < 256 * 1024)
    return 4096;
  if (blocks < 512 * 1024)
    return 8192;
  if (blocks < 4096 * 1024)
    return 16384;
  if (blocks < 8192 * 1024)
    return 32768;
  if (blocks < 16384 * 1024)
    return 65536;
  if (blocks < 32768 * 1024)
    return 131072;
  return 262144;
}

/* The geometry ext2fs_initialize() reaches for a device of dev_size
 * bytes: the inode count is fixed first (bytes / inode ratio); a last
 * group too small for its metadata and 50 blocks is dropped; if the
 * inodes then overflow 8 * 4096 per group, blocks per group shrink by 8
 * and the whole device is tried again. */
static void
ext4_geom(uint64_t dev_size, struct ext4_geom *g)
{
  uint64_t size_blocks = dev_size / EXT4_BLOCK;
  uint64_t blocks, bytes, ratio, want, ipg, itb, desc_blocks, used;
  uint32_t bpg = EXT4_BPG;

  if (size_blocks > EXT4_MAX_BLOCKS)
    size_blocks = EXT4_MAX_BLOCKS;
  bytes = size_blocks * EXT4_BLOCK;
  /* mke2fs.conf: "small" below 512 MiB, "big" from 4 TiB, "huge" from
   * 16 TiB. */
  if (bytes < (512ull << 20))
    ratio = 4096;
  else if (bytes < (4ull << 40))
    ratio = 16384;
  else if (bytes < (16ull << 40))
    ratio = 32768;
  else
    ratio = 65536;
  want = bytes / ratio;
  if (want > 0xffffffffull)
    want = 0xffffffffull;

  blocks = size_blocks;
  for (;;) {
    uint64_t groups = (blocks + bpg - 1) / bpg;
    uint64_t rem, last_overhead;

    ipg = (want + groups - 1) / groups;
    if (ipg > 8 * EXT4_BLOCK && bpg > 256) {
      bpg -= 8;
      blocks = size_blocks;
      continue;
    }
    if (ipg > 8 * EXT4_BLOCK)
      ipg = 8 * EXT4_BLOCK;
    /* Fill the inode table blocks: a multiple of 16 (and so of 8). */
    ipg = (ipg + EXT4_IPB - 1) / EXT4_IPB * EXT4_IPB;
    if (ipg * groups > 0xffffffffull)
      ipg = 0xffffffffull / groups / EXT4_IPB * EXT4_IPB;
    itb = ipg / EXT4_IPB;
    desc_blocks = (groups + EXT4_DESC_PER_BLOCK - 1) / EXT4_DESC_PER_BLOCK;

    g->blocks = blocks;
    g->bpg = bpg;
    g->groups = (uint32_t)groups;
    g->ipg = (uint32_t)ipg;
    /* mke2fs drops resize_inode when a 64bit fs passes 2^32 blocks;
     * else it reserves GDT blocks to grow 1024-fold
     * (calc_reserved_gdt_blocks()). */
    g->resize_inode = blocks <= 0xffffffffull;
    g->rsv_gdt = 0;
    if (g->resize_inode) {
      uint64_t max_blocks = 0xffffffffull;
      uint64_t rsv_groups, rsv;

      if (blocks < max_blocks / 1024)
        max_blocks = blocks * 1024;
      rsv_groups = (max_blocks + bpg - 1) / bpg;
      rsv = (rsv_groups + EXT4_DESC_PER_BLOCK - 1) / EXT4_DESC_PER_BLOCK;
      /* mke2fs's unsigned subtraction wraps, then is capped. */
      rsv = rsv >= desc_blocks ? rsv - desc_blocks : EXT4_BLOCK / 4;
      if (rsv > EXT4_BLOCK / 4)
        rsv = EXT4_BLOCK / 4;
      g->rsv_gdt = (uint32_t)rsv;
    }

    rem = blocks % bpg;
    last_overhead = 2 + itb;
    if (ext4_has_super(groups - 1))
      last_overhead += 1 + desc_blocks + g->rsv_gdt;
    if (groups > 1 && rem != 0 && rem < last_overhead + 50) {
      blocks -= rem;
      continue;
    }
    break;
  }

  g->overhead = ext4_super_groups(g->groups) * (1 + desc_blocks + g->rsv_gdt) +
                (uint64_t)g->groups * (2 + itb) + ext4_journal_blocks(blocks);
  /* Root directory (1), lost+found (4), the resize inode's indirect
   * block (1), and an extent block for a journal too long for the 4
   * extents of 32768 blocks an inode holds. */
  used = g->overhead + 6 + (ext4_journal_blocks(blocks) > 4 * 32768);
  g->free_blocks = blocks > used ? blocks - used : 0;
  g->r_blocks = blocks * 5 / 100;
}

/* The 1024-byte superblock (at byte 1024 of the device). */
static void
build_ext4(uint64_t dev_size, uint64_t seed, unsigned char *sb)
{
  uint32_t compat =
    EXT4_COMPAT_HAS_JOURNAL | EXT4_COMPAT_EXT_ATTR | EXT4_COMPAT_DIR_INDEX;
  struct ext4_geom g;
  uint32_t inodes;

  ext4_geom(dev_size, &g);
  inodes = g.ipg * g.groups;
  if (g.resize_inode)
    compat |= EXT4_COMPAT_RESIZE_INODE;

  ff_put_le32(sb + 0x00, inodes);
  ff_put_le32(sb + 0x04, (uint32_t)g.blocks);
  ff_put_le32(sb + 0x08, (uint32_t)g.r_blocks);
  ff_put_le32(sb + 0x0c, (uint32_t)g.free_blocks);
  ff_put_le32(sb + 0x10, inodes - 11); /* inodes 1..11 are reserved/used */
  ff_put_le32(sb + 0x14, 0);           /* first data block */
  ff_put_le32(sb + 0x18, 2);           /* log2(block size) - 10 */
  ff_put_le32(sb + 0x1c, 2);           /* log2(cluster size) - 10 */
  ff_put_le32(sb + 0x20, g.bpg);
  ff_put_le32(sb + 0x24, g.bpg); /* clusters per group */
  ff_put_le32(sb + 0x28, g.ipg);
  ff_put_le32(sb + 0x30, SIG_TIME); /* write time */
  ff_put_le16(sb + 0x36, 0xffff);   /* max mount count: -1 */
  ff_put_le16(sb + 0x38, 0xef53);   /* magic */
  ff_put_le16(sb + 0x3a, 1);        /* state: clean */
  ff_put_le16(sb + 0x3c, 1);        /* errors: continue */
  ff_put_le32(sb + 0x40, SIG_TIME); /* last check */
  ff_put_le32(sb + 0x4c, 1);        /* rev 1 (dynamic) */
  ff_put_le32(sb + 0x54, 11);       /* first inode */
  ff_put_le16(sb + 0x58, EXT4_INODE_SIZE);
  ff_put_le32(sb + 0x5c, compat);
  ff_put_le32(sb + 0x60, EXT4_INCOMPAT_FILETYPE | EXT4_INCOMPAT_EXTENTS |
                           EXT4_INCOMPAT_64BIT | EXT4_INCOMPAT_FLEX_BG);
  ff_put_le32(sb + 0x64, EXT4_RO_SPARSE_SUPER | EXT4_RO_LARGE_FILE |
                           EXT4_RO_HUGE_FILE | EXT4_RO_DIR_NLINK |
                           EXT4_RO_EXTRA_ISIZE);
  seed_uuid(seed, SALT_EXT4_UUID, sb + 0x68);
  memcpy(sb + 0x78, "fusefarm", 8); /* volume name, NUL-padded */
  ff_put_le16(sb + 0xce, (uint16_t)g.rsv_gdt);
  ff_put_le32(sb + 0xe0, 8);                  /* journal inode */
  seed_uuid(seed, SALT_EXT4_HASH, sb + 0xec); /* directory hash seed */
  sb[0xfc] = 1;                               /* default hash: half_md4 */
  ff_put_le16(sb + 0xfe, EXT4_DESC_SIZE);
  ff_put_le32(sb + 0x100, 0x000c);   /* default mount: user_xattr, acl */
  ff_put_le32(sb + 0x108, SIG_TIME); /* mkfs time */
  ff_put_le32(sb + 0x150, (uint32_t)(g.blocks >> 32));
  ff_put_le32(sb + 0x154, (uint32_t)(g.r_blocks >> 32));
  ff_put_le32(sb + 0x158, (uint32_t)(g.free_blocks >> 32));
  ff_put_le16(sb + 0x15c, 32);                   /* min extra isize */
  ff_put_le16(sb + 0x15e, 32);                   /* want extra isize */
  ff_put_le32(sb + 0x160, 0x0001);               /* signed directory hash */
  sb[0x174] = 4;                                 /* log2(groups per flex_bg) */
  ff_put_le32(sb + 0x248, (uint32_t)g.overhead); /* overhead clusters */
}

/* ------------------------------------------------------------------ */
/* XFS v4: the superblock mkfs.xfs -m crc=0 writes at byte 0. */

#define XFS_BLOCKLOG 12
#define XFS_BLOCK    (1u << XFS_BLOCKLOG)
#define XFS_INODELOG 8
/* The v4 superblock ends with sb_bad_features2; the rest of the sector
 * is zero. */
#define XFS_SB_V4_END 0xd0u
/* An AG is 16 MiB to 1 TiB - 1 block. */
#define XFS_AG_MIN_BLOCKS ((16u << 20) >> XFS_BLOCKLOG)
#define XFS_AG_MAX_BLOCKS ((uint32_t)(((1ull << 40) - 1) >> XFS_BLOCKLOG))
/* Superblock, AGF, AGI, AGFL (block 0) and the bno, cnt and inobt roots
 * (blocks 1-3) precede free space in every AG. */
#define XFS_PREALLOC_BLOCKS 4u
/* The least log mkfs.xfs 6.1 accepts for this geometry, and the size it
 * prefers below 16 GiB (64 MiB). */
#define XFS_MIN_LOG_BLOCKS 854u
#define XFS_DFL_LOG_BLOCKS 16384u
#define XFS_MAX_LOG_BLOCKS 521728u

#define XFS_GB(n) ((uint64_t)(n) << (30 - XFS_BLOCKLOG))
#define XFS_MB(n) ((uint64_t)(n) << (20 - XFS_BLOCKLOG))

struct xfs_geom {
  uint64_t dblocks;
  uint64_t logstart;
  uint64_t rootino;
  uint64_t fdblocks;
  uint32_t agblocks;
  uint32_t agcount;
  uint32_t logblocks;
  uint8_t agblklog;
  uint8_t imax_pct;
};

/* mkfs.xfs's calc_default_ag_geometry() for a single disk, then its
 * rule that a last AG under 16 MiB is dropped. */
static void
xfs_geom(uint64_t dev_size, struct xfs_geom *g)
{
  uint64_t dblocks = dev_size >> XFS_BLOCKLOG;
  uint64_t agsize, agcount, logagno, first;
  int shift = -1;

  if (dblocks >= XFS_GB(4096)) {
    agsize = XFS_AG_MAX_BLOCKS;
  } else {
    if (dblocks >= XFS_MB(128)) {
      shift = 2;
    } else {
      shift = 5 - 1 - 1 - 1; /* <= 512 GiB, <= 8 GiB, < 128 MiB */
      if (dblocks < XFS_MB(64))
        shift--;
      if (dblocks < XFS_MB(32))
        shift--;
    }
    agsize = dblocks >> shift;
    if ((dblocks & ((1ull << shift) - 1)) && agsize < XFS_AG_MAX_BLOCKS)
      agsize++;
  }
  agcount = dblocks / agsize + (dblocks % agsize != 0);
  if (dblocks % agsize != 0 && dblocks % agsize < XFS_AG_MIN_BLOCKS) {
    agcount--;
    dblocks = agcount * agsize;
  }

  g->dblocks = dblocks;
  g->agblocks = (uint32_t)agsize;
  g->agcount = (uint32_t)agcount;
  g->agblklog = 0;
  while ((1ull << g->agblklog) < agsize)
    g->agblklog++;

  if (dblocks < XFS_GB(1024))
    g->imax_pct = 25;
  else if (dblocks < XFS_GB(50 * 1024))
    g->imax_pct = 5;
  else
    g->imax_pct = 1;

  if (dblocks < XFS_GB(16)) {
    g->logblocks = XFS_DFL_LOG_BLOCKS;
    if (agsize < XFS_DFL_LOG_BLOCKS + 2 * XFS_PREALLOC_BLOCKS + 4)
      g->logblocks = XFS_MIN_LOG_BLOCKS;
  } else {
    uint64_t lb = dblocks / 2048; /* 2048:1, as mkfs.xfs */

    if (lb < XFS_DFL_LOG_BLOCKS)
      lb = XFS_DFL_LOG_BLOCKS;
    if (lb > XFS_MAX_LOG_BLOCKS)
      lb = XFS_MAX_LOG_BLOCKS;
    g->logblocks = (uint32_t)lb;
  }

  /* The log starts after the AG headers of the middle AG.  The root
   * inode chunk follows the headers of AG 0 (and the log, if that is in
   * AG 0) and 4 AGFL blocks, aligned to 2 blocks (8 KiB clusters). */
  logagno = agcount / 2;
  g->logstart = (logagno << g->agblklog) | XFS_PREALLOC_BLOCKS;
  first = XFS_PREALLOC_BLOCKS + (logagno == 0 ? g->logblocks : 0) + 4;
  first = (first + 1) & ~1ull;
  g->rootino = first << (XFS_BLOCKLOG - XFS_INODELOG);
  /* Everything but the log, each AG's headers and one inode chunk. */
  g->fdblocks = dblocks - g->logblocks - XFS_PREALLOC_BLOCKS * agcount - 4;
}

/* Sector 0 of an xfs device. */
static void
build_xfs(uint64_t dev_size, uint64_t seed, unsigned char *sb)
{
  struct xfs_geom g;

  xfs_geom(dev_size, &g);
  memcpy(sb, "XFSB", 4);
  ff_put_be32(sb + 0x04, XFS_BLOCK);
  ff_put_be64(sb + 0x08, g.dblocks);
  /* 0x10 rblocks, 0x18 rextents: no realtime device */
  seed_uuid(seed, SALT_XFS_UUID, sb + 0x20);
  ff_put_be64(sb + 0x30, g.logstart);
  ff_put_be64(sb + 0x38, g.rootino);
  ff_put_be64(sb + 0x40, g.rootino + 1); /* realtime bitmap inode */
  ff_put_be64(sb + 0x48, g.rootino + 2); /* realtime summary inode */
  ff_put_be32(sb + 0x50, 1);             /* rextsize */
  ff_put_be32(sb + 0x54, g.agblocks);
  ff_put_be32(sb + 0x58, g.agcount);
  ff_put_be32(sb + 0x60, g.logblocks);
  /* V4 | ATTR | NLINK | ALIGN | DIRV2 | LOGV2 | EXTFLG | MOREBITS */
  ff_put_be16(sb + 0x64, 0xb4a4);
  ff_put_be16(sb + 0x66, SECTOR);
  ff_put_be16(sb + 0x68, 1u << XFS_INODELOG);
  ff_put_be16(sb + 0x6a, XFS_BLOCK >> XFS_INODELOG);
  memcpy(sb + 0x6c, "fusefarm", 8); /* fname[12], NUL-padded */
  sb[0x78] = XFS_BLOCKLOG;
  sb[0x79] = 9; /* sectlog */
  sb[0x7a] = XFS_INODELOG;
  sb[0x7b] = XFS_BLOCKLOG - XFS_INODELOG; /* inopblog */
  sb[0x7c] = g.agblklog;
  sb[0x7f] = g.imax_pct;
  ff_put_be64(sb + 0x80, 64); /* icount: the root chunk */
  ff_put_be64(sb + 0x88, 61); /* ifree: all but root, rbm, rsum */
  ff_put_be64(sb + 0x90, g.fdblocks);
  ff_put_be32(sb + 0xb4, 2); /* inoalignmt: 8 KiB inode clusters */
  ff_put_be32(sb + 0xc4, 1); /* logsunit */
  /* LAZYSBCOUNT | ATTR2 | PROJID32 | FTYPE, mirrored in bad_features2 */
  ff_put_be32(sb + 0xc8, 0x28a);
  ff_put_be32(sb + 0xcc, 0x28a);
}

/* ------------------------------------------------------------------ */
/* md: the 1.2 superblock (struct mdp_superblock_1) at byte 4096. */

#define MD_SB_OFFSET   4096u
#define MD_SB_MAGIC    0xa92b4efcu
#define MD_DATA_OFFSET 2048u /* sectors */
#define MD_MAX_DEV     2u
#define MD_SB_BYTES    (256u + 2u * MD_MAX_DEV)
/* mdadm rounds the used size of a RAID1 member down to 64 KiB. */
#define MD_SIZE_ALIGN 128u

/* calc_sb_1_csum() of mdadm and the kernel: the 32-bit little-endian
 * words of the first 256 + 2 * max_dev bytes (sb_csum read as 0), a
 * trailing 16-bit word if any, with the carry folded back in once. */
static uint32_t
md_csum(const unsigned char *sb, size_t size)
{
  uint64_t sum = 0;
  size_t i;

  for (i = 0; i + 4 <= size; i += 4) {
    if (i != 216)
      sum += (uint32_t)sb[i] | (uint32_t)sb[i + 1] << 8 |
             (uint32_t)sb[i + 2] << 16 | (uint32_t)sb[i + 3] << 24;
  }
  if (size - i == 2)
    sum += (uint32_t)sb[i] | (uint32_t)sb[i + 1] << 8;
  return (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
}

static void
build_md(uint64_t dev_size, uint64_t seed, unsigned char *sb)
{
  uint64_t data_size = dev_size / SECTOR - MD_DATA_OFFSET;

  ff_put_le32(sb + 0, MD_SB_MAGIC);
  ff_put_le32(sb + 4, 1); /* major version */
  /* 8 feature_map: no bitmap, no bad block log */
  seed_uuid(seed, SALT_MD_SET, sb + 16); /* set_uuid */
  memcpy(sb + 32, "fusefarm:0", 10);     /* set_name[32] */
  ff_put_le64(sb + 64, SIG_TIME);        /* ctime */
  ff_put_le32(sb + 72, 1);               /* level: raid1 */
  ff_put_le64(sb + 80, data_size / MD_SIZE_ALIGN * MD_SIZE_ALIGN); /* size */
  ff_put_le32(sb + 92, 2); /* raid_disks */
  ff_put_le64(sb + 128, MD_DATA_OFFSET);
  ff_put_le64(sb + 136, data_size);
  ff_put_le64(sb + 144, MD_SB_OFFSET / SECTOR); /* super_offset */
  ff_put_le32(sb + 160, 0);                     /* dev_number */
  seed_uuid(seed, SALT_MD_DEV, sb + 168);       /* device_uuid */
  ff_put_le64(sb + 192, SIG_TIME);              /* utime */
  ff_put_le64(sb + 200, 1);                     /* events */
  ff_put_le64(sb + 208, ~0ull);                 /* resync_offset: in sync */
  ff_put_le32(sb + 220, MD_MAX_DEV);
  ff_put_le16(sb + 256, 0); /* dev 0: role 0 */
  ff_put_le16(sb + 258, 1); /* dev 1: role 1 */
  ff_put_le32(sb + 216, md_csum(sb, MD_SB_BYTES));
}

/* ------------------------------------------------------------------ */
/* Layout and reads. */

enum piece_kind {
  P_MBR,
  P_PMBR,
  P_GPT_HEADER,
  P_GPT_ENTRY,
  P_GPT_BACKUP_ENTRY,
  P_GPT_BACKUP_HEADER,
  P_EXT4,
  P_XFS,
  P_MD,
};

/* A structure built at base; only [base + lo, base + hi) can be
 * non-zero. */
struct piece {
  enum piece_kind kind;
  uint64_t base;
  uint32_t lo, hi;
};

static size_t
layout(enum ff_sig_type t, uint64_t dev_size, struct piece *p)
{
  uint64_t min = ff_sig_min_size(t);

  if (min == 0 || dev_size < min)
    return 0;
  switch (t) {
  case FF_SIG_MBR:
    p[0] = (struct piece){P_MBR, 0, 440, SECTOR};
    return 1;
  case FF_SIG_GPT: {
    struct gpt_geom g;

    gpt_geom(dev_size, &g);
    p[0] = (struct piece){P_PMBR, 0, 446, SECTOR};
    p[1] = (struct piece){P_GPT_HEADER, SECTOR, 0, GPT_HEADER_SIZE};
    p[2] = (struct piece){P_GPT_ENTRY, 2 * SECTOR, 0, GPT_ENTRY_SIZE};
    p[3] =
      (struct piece){P_GPT_BACKUP_ENTRY, (g.last - GPT_ARRAY_SECTORS) * SECTOR,
                     0, GPT_ENTRY_SIZE};
    p[4] =
      (struct piece){P_GPT_BACKUP_HEADER, g.last * SECTOR, 0, GPT_HEADER_SIZE};
    return 5;
  }
  case FF_SIG_EXT4:
    p[0] = (struct piece){P_EXT4, 1024, 0, EXT4_SB_USED};
    return 1;
  case FF_SIG_XFS:
    p[0] = (struct piece){P_XFS, 0, 0, XFS_SB_V4_END};
    return 1;
  case FF_SIG_MD:
    p[0] = (struct piece){P_MD, MD_SB_OFFSET, 0, MD_SB_BYTES};
    return 1;
  }
  return 0;
}

static void
build(const struct piece *p, uint64_t dev_size, uint64_t seed,
      unsigned char *s)
{
  switch (p->kind) {
  case P_MBR:
    build_mbr(dev_size, seed, s);
    break;
  case P_PMBR:
    build_pmbr(dev_size, s);
    break;
  case P_GPT_HEADER:
    build_gpt_header(dev_size, seed, 0, s);
    break;
  case P_GPT_BACKUP_HEADER:
    build_gpt_header(dev_size, seed, 1, s);
    break;
  case P_GPT_ENTRY:
  case P_GPT_BACKUP_ENTRY:
    build_gpt_entry(dev_size, seed, s);
    break;
  case P_EXT4:
    build_ext4(dev_size, seed, s);
    break;
  case P_XFS:
    build_xfs(dev_size, seed, s);
    break;
  case P_MD:
    build_md(dev_size, seed, s);
    break;
  }
}

int
ff_sig_parse(const char *name, enum ff_sig_type *out)
{
  static const enum ff_sig_type all[] = {FF_SIG_MBR, FF_SIG_GPT, FF_SIG_EXT4,
                                         FF_SIG_XFS, FF_SIG_MD};

  if (name == NULL)
    return -1;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (strcmp(name, ff_sig_name(all[i])) == 0) {
      *out = all[i];
      return 0;
    }
  }
  return -1;
}

const char *
ff_sig_name(enum ff_sig_type t)
{
  switch (t) {
  case FF_SIG_MBR:
    return "mbr";
  case FF_SIG_GPT:
    return "gpt";
  case FF_SIG_EXT4:
    return "ext4";
  case FF_SIG_XFS:
    return "xfs";
  case FF_SIG_MD:
    return "md";
  }
  return NULL;
}

uint64_t
ff_sig_min_size(enum ff_sig_type t)
{
  switch (t) {
  case FF_SIG_MBR:
    return (uint64_t)(MBR_PART_START + 1) * SECTOR;
  case FF_SIG_GPT:
    /* One aligned 1 MiB partition from 2048, then the backup array and
     * header (33 sectors). */
    return (uint64_t)(2 * GPT_ALIGN + GPT_ARRAY_SECTORS + 1) * SECTOR;
  case FF_SIG_EXT4:
    return 2048 * EXT4_BLOCK;
  case FF_SIG_XFS:
    return (uint64_t)XFS_AG_MIN_BLOCKS * XFS_BLOCK;
  case FF_SIG_MD:
    /* 1 MiB of data would do for mdadm, but blkid does not look for
     * RAID members on devices of 1440 KiB or less (BLKID_FL_TINY_DEV). */
    return 2u << 20;
  }
  return 0;
}

size_t
ff_sig_extents(enum ff_sig_type t, uint64_t dev_size, struct ff_range *out,
               size_t max)
{
  struct piece p[PIECES_MAX];
  size_t n = layout(t, dev_size, p);

  for (size_t i = 0; i < n && i < max; i++) {
    out[i].off = p[i].base + p[i].lo;
    out[i].len = p[i].hi - p[i].lo;
  }
  return n;
}

void
ff_sig_read(enum ff_sig_type t, uint64_t dev_size, uint64_t seed, void *buf,
            uint64_t off, size_t len)
{
  struct piece p[PIECES_MAX];
  size_t n = layout(t, dev_size, p);
  uint64_t end = off + len;

  if (end < off) /* a range running past 2^64 */
    end = UINT64_MAX;
  for (size_t i = 0; i < n; i++) {
    unsigned char s[PIECE_MAX];
    uint64_t lo = p[i].base + p[i].lo;
    uint64_t hi = p[i].base + p[i].hi;

    if (hi <= off || lo >= end)
      continue;
    memset(s, 0, sizeof s);
    build(&p[i], dev_size, seed, s);
    if (lo < off)
      lo = off;
    if (hi > end)
      hi = end;
    memcpy((unsigned char *)buf + (lo - off), s + (lo - p[i].base),
           (size_t)(hi - lo));
  }
}
