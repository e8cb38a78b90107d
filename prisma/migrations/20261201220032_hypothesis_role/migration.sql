-- AlterTable
ALTER TABLE "Hypothesis" ADD COLUMN "family" TEXT;
ALTER TABLE "Hypothesis" ADD COLUMN "path" TEXT;
ALTER TABLE "Hypothesis" ADD COLUMN "role" TEXT;

