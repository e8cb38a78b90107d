-- AlterTable
ALTER TABLE "Hypothesis" ADD COLUMN     "family" TEXT,
ADD COLUMN     "path" TEXT,
ADD COLUMN     "role" TEXT;

